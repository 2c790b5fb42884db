import { type Static, Type } from "typebox";
import { MAX_PAGE } from "../forms/forms.schemas.ts";
import { Pagination } from "../http/pagination.ts";

const Timestamp = Type.String({ format: "date-time", description: "ISO 8601, UTC, milliseconds" });
const NullableText = (description: string) =>
  Type.Union([Type.String(), Type.Null()], { description });

export const SPAM_REASONS = ["honeypot", "domain", "captcha_unverified", "manual"] as const;

export const SubmissionAnswer = Type.Object({
  id: Type.String({ description: "The field name (endpoint forms) or field id (hosted forms)" }),
  label: Type.String({ description: "The field's label on hosted forms, the name otherwise" }),
  value: Type.Unknown({
    description: "A string, an array of strings, or for JSON bodies the JSON value sent",
  }),
});

export const SubmissionFile = Type.Object({
  id: Type.String(),
  field: Type.String(),
  name: Type.String(),
  type: Type.String({ description: "As detected from the content" }),
  size: Type.Integer({ description: "Bytes, after compression" }),
  url: Type.String({ description: "A signed link that works without a key for 7 days" }),
});

export const Submission = Type.Object({
  id: Type.String(),
  formId: Type.String(),
  isSpam: Type.Boolean(),
  spamReason: Type.Union(
    [
      Type.Unsafe<(typeof SPAM_REASONS)[number]>({ type: "string", enum: SPAM_REASONS }),
      Type.Null(),
    ],
    { description: "Why it is spam; `manual` when marked by hand; null when not spam" },
  ),
  answers: Type.Array(SubmissionAnswer, { description: "In the order received" }),
  files: Type.Array(SubmissionFile),
  meta: Type.Object({
    ip: NullableText("The client address"),
    country: NullableText("ISO 3166-1 alpha-2 code of the client address"),
    userAgent: NullableText("The User-Agent header"),
    referrer: NullableText("The Referer header"),
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export type SubmissionRecord = Static<typeof Submission>;

const SEARCH_MAX_LENGTH = 200;

/** The filters the list and the export share. */
const filters = {
  isSpam: Type.Optional(
    Type.Unsafe<"true" | "false">({
      type: "string",
      enum: ["true", "false"],
      description: "false (default): the inbox; true: spam",
    }),
  ),
  search: Type.Optional(
    Type.String({
      maxLength: SEARCH_MAX_LENGTH,
      description: "Case-insensitive part of any answer value; `%`, `_` and `\\` match literally",
    }),
  ),
  since: Type.Optional(
    Type.String({
      format: "instant",
      description: "ISO 8601 instant with a time zone; only submissions created at or after it",
    }),
  ),
  until: Type.Optional(
    Type.String({
      format: "instant",
      description: "ISO 8601 instant with a time zone; only submissions created before it",
    }),
  ),
};

export const ListSubmissionsQuery = Type.Object(
  {
    ...filters,
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);

export type ListSubmissionsParams = Static<typeof ListSubmissionsQuery>;

export const EXPORT_FORMATS = ["csv", "ndjson"] as const;

export const ExportSubmissionsQuery = Type.Object(
  {
    ...filters,
    format: Type.Optional(
      Type.Unsafe<(typeof EXPORT_FORMATS)[number]>({
        type: "string",
        enum: EXPORT_FORMATS,
        description: "csv (default) or ndjson",
      }),
    ),
  },
  { additionalProperties: false },
);

export type ExportSubmissionsParams = Static<typeof ExportSubmissionsQuery>;

export const SubmissionList = Type.Object({
  data: Type.Array(Submission),
  meta: Type.Object({
    total: Type.Integer({ description: "Submissions the filters match" }),
    totalInbox: Type.Integer({
      description: "Submissions not spam that the other filters (search, since, until) match",
    }),
    totalSpam: Type.Integer({
      description: "Spam submissions that the other filters (search, since, until) match",
    }),
  }),
  pagination: Pagination,
});

export const UpdateSubmissionBody = Type.Object(
  { isSpam: Type.Boolean({ description: "true: move to spam; false: back to the inbox" }) },
  { additionalProperties: false, examples: [{ isSpam: true }] },
);

export type UpdateSubmissionInput = Static<typeof UpdateSubmissionBody>;

export const SubmissionIdParams = Type.Object({
  formId: Type.String({ description: "Form id" }),
  submissionId: Type.String({ description: "Submission id" }),
});
