import { type Static, type TSchema, Type } from "typebox";
import { Pagination } from "../http/pagination.ts";
import { FormField, FormFieldInput, MAX_FIELDS } from "./form-field.schema.ts";

/** A string limited to `values`, typed as their union. */
const OneOf = <const T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: "string", enum: values, ...(description && { description }) });

const Text = (maxLength: number, description: string) => Type.String({ maxLength, description });
/** Text that ends up in an email header: one line, no control characters (docs/decisions.md). */
const HeaderText = (maxLength: number, description: string) =>
  Type.String({ maxLength, format: "single-line", description });
const Format = (format: string, description: string, maxLength = 2048) =>
  Type.String({ format, maxLength, description });

export const FORM_TYPES = ["endpoint", "hosted"] as const;
export const STORAGE_DURATIONS = ["30", "60", "90", "365", "forever", "never"] as const;
const BORDER_STYLES = ["full", "flat", "rounded"] as const;
const IMAGE_TYPES = ["webp", "jpeg", "png"] as const;
const PAGE_MODES = ["compact", "full"] as const;
const CAPTCHA_PROVIDERS = ["turnstile", "hcaptcha", "recaptcha"] as const;

export const MAX_NAME_LENGTH = 200;
export const MAX_EMAILS = 50;
export const MAX_RESPONSES = 2_147_483_647;

/**
 * Every member a client may write, with its rules. Create and update each accept a subset, as the
 * spec lists them; one declaration here gives both their validation and their documentation.
 */
const writable = {
  // `\S`: a name of only spaces would show as nothing in every list.
  name: Type.String({
    minLength: 1,
    maxLength: MAX_NAME_LENGTH,
    pattern: "\\S",
    format: "single-line",
    description: "Form name; one line, no control characters",
  }),
  type: OneOf(FORM_TYPES, "Form type; fixed once created"),
  removeServiceBranding: Type.Boolean(),
  sendEmailNotifications: Type.Boolean(),
  emailsToNotify: Type.Array(Type.String({ format: "email" }), {
    maxItems: MAX_EMAILS,
    description: "Addresses notified of submissions; duplicates are removed",
  }),
  submissionStorageDuration: OneOf(STORAGE_DURATIONS, "Days submissions are kept"),
  sendRespondentEmailNotifications: Type.Boolean({ description: "Paid plan" }),
  respondentEmailFromName: HeaderText(200, "From name of respondent emails; one line"),
  respondentEmailSubject: HeaderText(500, "Subject of respondent emails; one line"),
  respondentEmailMessageHTML: Text(100_000, "Message of respondent emails (HTML)"),
  limitResponses: Type.Boolean(),
  isClosed: Type.Boolean(),
  autoCloseEnabled: Type.Boolean({ description: "Paid plan" }),
  autoCloseDate: Format("date", "YYYY-MM-DD, or empty", 10),
  autoCloseTimezone: Format("timezone", "IANA time zone, e.g. Europe/Berlin, or empty", 100),
  autoCloseTime: Format("time-hhmm", "HH:mm (24 h), or empty", 5),
  maxResponses: Type.Integer({ minimum: 1, maximum: MAX_RESPONSES }),
  useCustomThankYouPage: Type.Boolean(),
  tpButtonText: Text(200, "Thank-you page button text"),
  tpButtonColor: Format("color", "#rgb or #rrggbb", 7),
  tpButtonBackgroundColor: Format("color", "#rgb or #rrggbb", 7),
  tpBackgroundColor: Format("color", "#rgb or #rrggbb", 7),
  tpTextColor: Format("color", "#rgb or #rrggbb", 7),
  tpHeader: Text(500, "Thank-you page header"),
  tpMessage: Text(5_000, "Thank-you page message"),
  tpButtonUrl: Format("http-url", "Absolute http(s) URL, or empty"),
  useCustomRedirect: Type.Boolean({ description: "Paid plan" }),
  customSuccessUrl: Format("http-url", "Absolute http(s) URL, or empty"),
  customHoneypot: Text(200, "Name of the honeypot field"),
  providerCaptchaEnabled: Type.Boolean(),
  providerCaptchaSecretKey: Type.String({
    maxLength: 1_000,
    description: "Secret of the bot-check provider; stored, never returned",
  }),
  captchaProvider: OneOf(CAPTCHA_PROVIDERS, "Bot check the hosted page shows"),
  captchaSiteKey: Text(200, "Public site key of the hosted page's bot check"),
  saveAnswers: Type.Boolean(),
  allowedDomains: Format(
    "domain-list",
    "Host names allowed to submit, separated by commas (at most 100; *.example.com for its subdomains), or empty",
    30_000,
  ),
  seoTitle: Text(200, "Title for link previews"),
  seoDescription: Text(1_000, "Description for link previews"),
  seoImage: Format("https-url", "Absolute https image URL, or empty"),
  allowedCountries: Format(
    "country-list",
    "ISO 3166-1 alpha-2 codes allowed to submit, separated by commas (DE,fr), or empty",
    5_000,
  ),
  fields: Type.Array(FormFieldInput, {
    maxItems: MAX_FIELDS,
    description: "Fields of a hosted form (hosted-forms rules: src/fields/field-rules.ts)",
  }),
  submitButtonText: Text(200, "Submit button text"),
  pageMode: OneOf(PAGE_MODES, "Hosted page layout"),
  headerTitle: Text(500, "Hosted page title"),
  headerDescription: Text(5_000, "Hosted page description"),
  headerImage: Format("https-url", "Absolute https image URL, or empty"),
  logo: Format("https-url", "Absolute https image URL, or empty"),
  accentColor: Format("color", "#rgb or #rrggbb", 7),
  backgroundColor: Format("color", "#rgb or #rrggbb", 7),
  textColor: Format("color", "#rgb or #rrggbb", 7),
  buttonBackgroundColor: Format("color", "#rgb or #rrggbb", 7),
  buttonTextColor: Format("color", "#rgb or #rrggbb", 7),
  buttonBorderStyle: OneOf(BORDER_STYLES),
  inputBorderStyle: OneOf(BORDER_STYLES),
  showCustomClosedMessage: Type.Boolean(),
  closeMessageTitle: Text(500, "Title shown while the form is closed"),
  closeMessageDescription: Text(5_000, "Text shown while the form is closed"),
  ipBlacklist: Format(
    "ip-list",
    "IPv4 or IPv6 addresses or CIDR ranges refused, separated by commas (at most 1,000), or empty",
    60_000,
  ),
  imageCompressionType: Type.Array(OneOf(IMAGE_TYPES), { maxItems: 3, uniqueItems: true }),
  disableEmailDataCensoring: Type.Boolean(),
};

type Writable = typeof writable;

function pick<const K extends keyof Writable>(keys: readonly K[]): { [P in K]: Writable[P] } {
  return Object.fromEntries(keys.map((k) => [k, writable[k]])) as { [P in K]: Writable[P] };
}

const optional = <T extends Record<string, TSchema>>(properties: T) =>
  Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)])) as {
    [P in keyof T]: ReturnType<typeof Type.Optional<T[P]>>;
  };

const SHARED_WRITABLE = [
  "removeServiceBranding",
  "sendEmailNotifications",
  "emailsToNotify",
  "submissionStorageDuration",
  "sendRespondentEmailNotifications",
  "respondentEmailFromName",
  "respondentEmailSubject",
  "respondentEmailMessageHTML",
  "limitResponses",
  "isClosed",
  "autoCloseEnabled",
  "autoCloseDate",
  "autoCloseTimezone",
  "autoCloseTime",
  "useCustomThankYouPage",
  "tpButtonText",
  "tpButtonColor",
  "tpButtonBackgroundColor",
  "tpBackgroundColor",
  "tpTextColor",
  "tpHeader",
  "tpMessage",
  "tpButtonUrl",
  "useCustomRedirect",
  "customSuccessUrl",
  "customHoneypot",
  "providerCaptchaEnabled",
  "providerCaptchaSecretKey",
  "captchaProvider",
  "captchaSiteKey",
  "allowedDomains",
  "fields",
  "submitButtonText",
  "pageMode",
  "headerTitle",
  "headerDescription",
  "headerImage",
  "logo",
  "accentColor",
  "backgroundColor",
  "textColor",
  "buttonBackgroundColor",
  "buttonTextColor",
  "buttonBorderStyle",
  "inputBorderStyle",
  "showCustomClosedMessage",
  "closeMessageTitle",
  "closeMessageDescription",
  "ipBlacklist",
  "imageCompressionType",
  "disableEmailDataCensoring",
] as const;

export const CreateFormBody = Type.Object(
  {
    name: writable.name,
    ...optional(pick([...SHARED_WRITABLE, "type", "saveAnswers"])),
    maxResponses: Type.Optional(
      Type.Unsafe<number | null>({ ...writable.maxResponses, type: ["integer", "null"] }),
    ),
  },
  { additionalProperties: false },
);

export const UpdateFormBody = Type.Object(
  optional(
    pick([
      "name",
      ...SHARED_WRITABLE,
      "maxResponses",
      "seoTitle",
      "seoDescription",
      "seoImage",
      "allowedCountries",
    ]),
  ),
  { additionalProperties: false },
);

export type CreateFormInput = Static<typeof CreateFormBody>;
export type UpdateFormInput = Static<typeof UpdateFormBody>;

const Timestamp = Type.String({ format: "date-time", description: "ISO 8601, UTC, milliseconds" });
const ImageCompressionType = Type.Array(OneOf(IMAGE_TYPES));

export const FormListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: OneOf(FORM_TYPES),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  imageCompressionType: ImageCompressionType,
  isClosed: Type.Boolean(),
  submissions: Type.Integer(),
  organizationId: Type.String(),
});

export const Form = Type.Object({
  id: Type.String(),
  name: Type.String(),
  organizationId: Type.String(),
  type: OneOf(FORM_TYPES),
  removeServiceBranding: Type.Boolean(),
  sendEmailNotifications: Type.Boolean(),
  emailsToNotify: Type.Array(Type.String()),
  submissionStorageDuration: OneOf(STORAGE_DURATIONS),
  sendRespondentEmailNotifications: Type.Boolean(),
  respondentEmailFromName: Type.String(),
  respondentEmailSubject: Type.String(),
  respondentEmailMessageHTML: Type.String(),
  submitButtonText: Type.String(),
  limitResponses: Type.Boolean(),
  maxResponses: Type.Union([Type.Integer(), Type.Null()]),
  isClosed: Type.Boolean(),
  autoCloseEnabled: Type.Boolean(),
  autoCloseDate: Type.String(),
  autoCloseTime: Type.String(),
  autoCloseTimezone: Type.String(),
  useCustomRedirect: Type.Boolean(),
  customSuccessUrl: Type.String(),
  webhookEnabled: Type.Boolean({ description: "Read-only" }),
  webhookUrl: Type.String({ description: "Read-only" }),
  customHoneypot: Type.String(),
  providerCaptchaEnabled: Type.Boolean(),
  captchaProvider: OneOf(CAPTCHA_PROVIDERS),
  captchaSiteKey: Type.String(),
  allowedDomains: Type.String(),
  allowedCountries: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  fields: Type.Array(FormField),
  accentColor: Type.String(),
  backgroundColor: Type.String(),
  buttonBackgroundColor: Type.String(),
  buttonBorderStyle: OneOf(BORDER_STYLES),
  buttonTextColor: Type.String(),
  closeMessageTitle: Type.String(),
  closeMessageDescription: Type.String(),
  showCustomClosedMessage: Type.Boolean(),
  headerTitle: Type.String(),
  headerDescription: Type.String(),
  headerImage: Type.String(),
  seoTitle: Type.String(),
  seoDescription: Type.String(),
  seoImage: Type.String(),
  inputBorderStyle: OneOf(BORDER_STYLES),
  logo: Type.String(),
  pageMode: OneOf(PAGE_MODES),
  saveAnswers: Type.Boolean(),
  textColor: Type.String(),
  useCustomThankYouPage: Type.Boolean(),
  tpBackgroundColor: Type.String(),
  tpButtonColor: Type.String(),
  tpButtonBackgroundColor: Type.String(),
  tpButtonText: Type.String(),
  tpButtonUrl: Type.String(),
  tpHeader: Type.String(),
  tpMessage: Type.String(),
  tpTextColor: Type.String(),
  ipBlacklist: Type.String(),
  imageCompressionType: ImageCompressionType,
  disableEmailDataCensoring: Type.Boolean(),
});

export type FormRecord = Static<typeof Form>;
export type FormListItemRecord = Static<typeof FormListItem>;

export const MAX_PAGE = Number.MAX_SAFE_INTEGER;

export const ListFormsQuery = Type.Object(
  {
    search: Type.Optional(
      Type.String({ maxLength: MAX_NAME_LENGTH, description: "Case-insensitive part of the name" }),
    ),
    type: Type.Optional(OneOf(FORM_TYPES)),
    sort: Type.Optional(OneOf(["createdAt", "submissions"] as const, "Always descending")),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);

export type ListFormsParams = Static<typeof ListFormsQuery>;

export const FormList = Type.Object({
  data: Type.Array(FormListItem),
  meta: Type.Object({
    total: Type.Integer(),
    totalCapped: Type.Optional(
      Type.Literal(true, {
        description:
          "Present when a search matches more than 10,000 forms: `total` is 10,000, and pages go no further",
      }),
    ),
  }),
  pagination: Pagination,
});

/** Routes other than the list read no query parameters: any one sent is refused by name. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const FormIdParams = Type.Object({ formId: Type.String({ description: "Form id" }) });
