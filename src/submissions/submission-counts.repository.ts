import type { Queryable } from "../db/database.ts";

/** Changes the form's `submissions` counter by `delta`, in the caller's transaction. */
export async function changeSubmissionCount(
  db: Queryable,
  formId: string,
  delta: number,
): Promise<void> {
  await db.query("UPDATE forms SET submissions = submissions + $2 WHERE id = $1", [formId, delta]);
}
