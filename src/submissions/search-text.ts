import type { Answer } from "./answer.ts";

/** What search matches: every answer value as text, NFC-normalized so that composed and decomposed input match. */
export function submissionSearchText(answers: readonly Answer[]): string {
  return answers
    .map((answer) => answerText(answer.value))
    .join("\n")
    .normalize("NFC");
}

function answerText(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((item) => typeof item === "string"))
    return value.join("\n");
  return JSON.stringify(value);
}
