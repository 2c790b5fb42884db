/** A migration never changes once released: a change to the schema is a new file. */
export interface Migration {
  readonly name: string;
  readonly statements: readonly string[];
}
