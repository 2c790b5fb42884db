import type { Answer } from "../../submissions/answer.ts";

/** Names and labels whose values owner emails never show whole. */
const SENSITIVE_NAME = /password|secret|token|card|cvv|cvc|iban|ssn/i;

const MASK = "••••";

/** The Luhn check of a string of digits. */
function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** A card number: 13 to 19 digits, spaces and dashes aside, that pass the Luhn check. */
export function isCardNumber(text: string): boolean {
  const digits = text.replace(/[\s-]/g, "");
  return /^[0-9]{13,19}$/.test(digits) && passesLuhn(digits);
}

/** `••••` and the last 4 characters; `••••` alone for a value shorter than 8. */
export function masked(text: string): string {
  const characters = [...text];
  return characters.length < 8 ? MASK : `${MASK}${characters.slice(-4).join("")}`;
}

/** An answer value as one line of text: arrays element by element, other JSON as JSON. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

function censorValue(value: unknown, sensitiveField: boolean): unknown {
  if (Array.isArray(value)) return value.map((element) => censorValue(element, sensitiveField));
  const text = valueText(value);
  if (value === null || value === undefined) return value;
  return sensitiveField || isCardNumber(text) ? masked(text) : value;
}

/**
 * The answers as an owner email shows them (notifications.md §2): card numbers, and every value
 * of a field whose name or label says it is secret, reduced to their last 4 characters.
 */
export function censorAnswers(answers: readonly Answer[]): Answer[] {
  return answers.map((answer) => ({
    ...answer,
    value: censorValue(
      answer.value,
      SENSITIVE_NAME.test(answer.id) || SENSITIVE_NAME.test(answer.label),
    ),
  }));
}
