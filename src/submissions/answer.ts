/** One answer of a submission: the field name (endpoint forms) or field id (hosted forms), its label, its value. */
export interface Answer {
  id: string;
  label: string;
  value: unknown;
}
