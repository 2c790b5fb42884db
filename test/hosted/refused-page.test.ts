import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_CAPTCHA_SCRIPT_URLS } from "../../src/hosted/captcha-scripts.ts";
import type { Field } from "../../src/hosted/field-controls.ts";
import { formPage } from "../../src/hosted/form-page.ts";
import { refusalState } from "../../src/hosted/refusal.ts";
import { appearanceOf } from "../../src/hosted/theme.ts";
import { SAMPLE_FIELDS } from "./sample-form.ts";

const render = (values: [string, unknown][], errors: [string, string][]) =>
  formPage(
    {
      id: "form_x",
      name: "Refused",
      appearance: appearanceOf({ fields: SAMPLE_FIELDS as unknown as Field[] }),
      next: "/f/form_x/thanks",
    },
    DEFAULT_CAPTCHA_SCRIPT_URLS,
    refusalState(values, errors),
  );

test("a refused post: answers kept as typed, each invalid control tied to its message", () => {
  const html = render(
    [
      ["name", "Ada <Lovelace>"],
      ["email", "not-an-address"],
      ["topics", ["Forms", "Analytics"]],
      ["plan", "Team"],
      ["message", 'Line one\n"two"'],
      ["stars", "4"],
    ],
    [
      ["email", "must be an email address"],
      ["role", "is required"],
    ],
  );
  assert.match(html, /<input id="name" name="name" required type="text" value="Ada &lt;Lovelace>"/);
  assert.match(
    html,
    /<input id="email" name="email" required aria-invalid="true" aria-describedby="email-hint email-error" type="email" value="not-an-address"/,
  );
  assert.match(
    html,
    /<p class="error" id="email-error" aria-live="polite">This answer must be an email address.<\/p>/,
  );
  assert.match(
    html,
    /<input type="radio" name="role" value="Designer" id="role" required aria-invalid="true" aria-describedby="role-error"\/>/,
  );
  assert.match(
    html,
    /<p class="error" id="role-error" aria-live="polite">Please answer this question.<\/p>/,
  );
  assert.match(html, /<input type="checkbox" name="topics" value="Forms" id="topics" checked\/>/);
  assert.match(html, /<input type="checkbox" name="topics" value="Analytics" checked\/>/);
  assert.match(html, /<input type="checkbox" name="topics" value="Payments"\/>/);
  assert.match(html, /<option value="Team" selected>Team<\/option>/);
  assert.match(
    html,
    /<textarea id="message" name="message" maxlength="10000">Line one\n&quot;two&quot;<\/textarea>/,
  );
  assert.match(html, /<input type="radio" name="stars" value="4" checked aria-label="4 of 5"\/>/);
  assert.match(
    html,
    /<p class="summary" role="alert" id="summary">2 answers need your attention.<\/p>/,
  );
  assert.equal(
    html.match(/aria-invalid="true"/g)?.length,
    4,
    "the email input and the role radios",
  );
});
