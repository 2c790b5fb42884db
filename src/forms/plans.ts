import type { KeyOwner } from "../auth/api-keys.repository.ts";
import { AppError } from "../http/errors.ts";
import type { FormSettings } from "./form-defaults.ts";
import type { CreateFormInput, UpdateFormInput } from "./forms.schemas.ts";

/** Each paid setting, and the members that only take effect while it is on. */
export const PAID_FEATURES = {
  sendRespondentEmailNotifications: [
    "respondentEmailFromName",
    "respondentEmailSubject",
    "respondentEmailMessageHTML",
  ],
  useCustomRedirect: ["customSuccessUrl"],
  autoCloseEnabled: ["autoCloseDate", "autoCloseTime", "autoCloseTimezone"],
} as const;
export const PAID_MEMBERS: readonly string[] = Object.entries(PAID_FEATURES).flat(2);

/**
 * Why the owner's plan refuses `input`, if it does (docs/decisions.md, "Plans"). On the free plan
 * a paid setting cannot be turned on; one already on (from before a downgrade) keeps working as
 * it is: it may be turned off, or sent again as it is, but what it does cannot be changed.
 * `stored` is the form's settings, on update.
 */
function planRefusal(
  owner: KeyOwner,
  input: CreateFormInput | UpdateFormInput,
  stored?: FormSettings,
): string | undefined {
  if (owner.plan === "paid") return undefined;
  const sent = input as Record<string, unknown>;
  for (const [setting, details] of Object.entries(PAID_FEATURES)) {
    const wasOn = stored?.[setting as keyof FormSettings] === true;
    if (sent[setting] === true && !wasOn) return `${setting}: needs the paid plan`;
    if (!wasOn || sent[setting] === false) continue;
    const changed = details.find(
      (member) => member in sent && sent[member] !== stored?.[member as keyof FormSettings],
    );
    if (changed) return `${changed}: needs the paid plan while ${setting} is on`;
  }
  return undefined;
}

export function requirePlanFor(
  owner: KeyOwner,
  input: CreateFormInput | UpdateFormInput,
  stored?: FormSettings,
) {
  const refusal = planRefusal(owner, input, stored);
  if (refusal) throw new AppError("forbidden", refusal);
}
