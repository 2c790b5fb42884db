import type { Answer } from "../../submissions/answer.ts";
import type { SubmissionRecord } from "../../submissions/submissions.schemas.ts";
import { censorAnswers, valueText } from "./censor.ts";
import { escapeHtml } from "./html-text.ts";

/** An answer's value as the email shows it: arrays joined with commas. */
const shown = (value: unknown) =>
  Array.isArray(value) ? value.map(valueText).join(", ") : valueText(value);

export interface OwnerMessageInput {
  formName: string;
  submission: Pick<SubmissionRecord, "id" | "answers" | "files" | "createdAt">;
  censor: boolean;
}

/** The owner notification's subject (notifications.md §2). */
export const ownerSubject = (formName: string) => `New submission: ${formName}`;

/**
 * The owner notification's bodies: every answer, label and value in order, then the files'
 * names with their signed links. Values are censored unless the form turned that off.
 */
export function ownerBodies({ formName, submission, censor }: OwnerMessageInput): {
  html: string;
  text: string;
} {
  const answers: Answer[] = censor ? censorAnswers(submission.answers) : submission.answers;
  const heading = `New submission to ${formName}`;
  const textLines = [heading, ""];
  const rows: string[] = [];
  for (const answer of answers) {
    const value = shown(answer.value);
    textLines.push(`${answer.label}:`, value, "");
    rows.push(
      `<tr><th align="left" valign="top" style="padding:4px 12px 4px 0">${escapeHtml(answer.label)}</th>` +
        `<td style="padding:4px 0;white-space:pre-wrap">${escapeHtml(value)}</td></tr>`,
    );
  }
  const files = submission.files.map((file) => ({ name: file.name, url: file.url }));
  if (files.length > 0) {
    textLines.push("Files:", ...files.map((file) => `${file.name}: ${file.url}`), "");
  }
  const fileList =
    files.length === 0
      ? ""
      : `<h3>Files</h3><ul>${files
          .map((file) => `<li><a href="${escapeHtml(file.url)}">${escapeHtml(file.name)}</a></li>`)
          .join("")}</ul>`;
  textLines.push(`Submission ${submission.id}, received ${submission.createdAt}`);
  const html =
    `<!doctype html><html><body><h2>${escapeHtml(heading)}</h2>` +
    `<table cellspacing="0" cellpadding="0">${rows.join("")}</table>${fileList}` +
    `<p style="color:#6b7280">Submission ${escapeHtml(submission.id)}, received ${escapeHtml(submission.createdAt)}</p>` +
    "</body></html>";
  return { html, text: textLines.join("\n") };
}
