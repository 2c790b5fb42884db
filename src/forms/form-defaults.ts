import type { FormRecord } from "./forms.schemas.ts";

/** The members kept in the `settings` document: everything but the columns of the forms table. */
export type FormSettings = Omit<
  FormRecord,
  "id" | "name" | "organizationId" | "type" | "isClosed" | "createdAt" | "updatedAt"
>;

/** Formbox's published defaults, as decisions.md lists them. */
export const DEFAULT_SETTINGS: Readonly<FormSettings> = Object.freeze({
  removeServiceBranding: false,
  sendEmailNotifications: true,
  emailsToNotify: [],
  submissionStorageDuration: "365",
  sendRespondentEmailNotifications: false,
  respondentEmailFromName: "",
  respondentEmailSubject: "",
  respondentEmailMessageHTML: "",
  submitButtonText: "Submit",
  limitResponses: false,
  maxResponses: null,
  autoCloseEnabled: false,
  autoCloseDate: "",
  autoCloseTime: "",
  autoCloseTimezone: "",
  useCustomRedirect: false,
  customSuccessUrl: "",
  webhookEnabled: false,
  webhookUrl: "",
  customHoneypot: "",
  providerCaptchaEnabled: false,
  captchaProvider: "turnstile",
  captchaSiteKey: "",
  allowedDomains: "",
  allowedCountries: "",
  fields: [],
  accentColor: "#030712",
  backgroundColor: "#ffffff",
  buttonBackgroundColor: "#030712",
  buttonBorderStyle: "rounded",
  buttonTextColor: "#ffffff",
  closeMessageTitle: "",
  closeMessageDescription: "",
  showCustomClosedMessage: false,
  headerTitle: "",
  headerDescription: "",
  headerImage: "",
  seoTitle: "",
  seoDescription: "",
  seoImage: "",
  inputBorderStyle: "rounded",
  logo: "",
  pageMode: "compact",
  saveAnswers: true,
  textColor: "#000000",
  useCustomThankYouPage: false,
  tpBackgroundColor: "#ffffff",
  tpButtonColor: "#030712",
  tpButtonBackgroundColor: "#f3f4f6",
  tpButtonText: "",
  tpButtonUrl: "",
  tpHeader: "",
  tpMessage: "",
  tpTextColor: "#030712",
  ipBlacklist: "",
  imageCompressionType: [],
  disableEmailDataCensoring: false,
});

const completedSettings = new WeakMap<Partial<FormSettings>, Readonly<FormSettings>>();

/**
 * `settings` with the defaults of what it leaves out. A kept form's settings are read on every
 * submission to it: the completed copy is made once per settings document and shared (frozen).
 */
export function settingsWithDefaults(settings: Partial<FormSettings>): Readonly<FormSettings> {
  let completed = completedSettings.get(settings);
  if (completed === undefined) {
    completed = Object.freeze({ ...DEFAULT_SETTINGS, ...settings });
    completedSettings.set(settings, completed);
  }
  return completed;
}
