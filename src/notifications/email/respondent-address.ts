import { isEmail } from "../../http/formats.ts";
import type { Answer } from "../../submissions/answer.ts";

const answerTo = (answers: readonly Answer[], id: string) =>
  answers.find((answer) => answer.id === id);

/**
 * The respondent's address (notifications.md §2): the `_replyto` answer, else the `email` answer,
 * else the answer to a hosted form's first email field. Only a single valid address counts: an
 * answer that is anything else (a list, two addresses, text) gives none.
 */
export function respondentAddress(
  answers: readonly Answer[],
  fields: readonly { id: string; type: string; subtype: string }[],
): string | null {
  const emailField = fields.find((field) => field.subtype === "email" || field.type === "email");
  const answer =
    answerTo(answers, "_replyto") ??
    answerTo(answers, "email") ??
    (emailField ? answerTo(answers, emailField.id) : undefined);
  const value = typeof answer?.value === "string" ? answer.value.trim() : null;
  return value !== null && isEmail(value) ? value : null;
}
