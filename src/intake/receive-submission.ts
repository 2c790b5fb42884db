import type { Readable } from "node:stream";
import type { FastifyRequest } from "fastify";
import type { Config } from "../config.ts";
import type { Database } from "../db/database.ts";
import type { FileLinks } from "../files/file-links.ts";
import type { UploadBudget } from "../files/upload-budget.ts";
import type { UploadPace, UploadTurn } from "../files/upload-pace.ts";
import { type ReceivedFile, receiveFile, UploadSpool } from "../files/uploads.ts";
import { settingsWithDefaults } from "../forms/form-defaults.ts";
import { AppError, invalid } from "../http/errors.ts";
import {
  findStoredResponse,
  type KeyedRequest,
  respondOnce,
  type StoredResponse,
} from "../idempotency/idempotency.service.ts";
import { idempotencyKeyOf, requestHash } from "../idempotency/idempotency-key.ts";
import type { EventRelay } from "../notifications/event-relay.ts";
import type { TaskSlots } from "../task-slots.ts";
import type { IntakeForm } from "./intake.repository.ts";
import type { IntakeDependencies } from "./intake.routes.ts";
import {
  buildSubmission,
  checkAnswers,
  checkCaptcha,
  type IntakeClient,
  storeSubmission,
} from "./intake.service.ts";
import {
  MAX_FIELD_NAME_LENGTH,
  parseJsonObject,
  parseUrlEncoded,
  requireStorableText,
  type SubmittedFields,
} from "./intake-body.ts";
import { readMultipart } from "./multipart-body.ts";
import { prefersHtml } from "./negotiation.ts";
import { needsOnlyItsRow, storeInOneStatement } from "./one-statement-intake.ts";

const uploadsBusy = () =>
  new AppError(
    "service_unavailable",
    "uploads: the server is receiving too many files; retry shortly",
  );

/** What an idempotent retry must send again for a file: the same field, name and content. */
const fileFingerprint = (file: ReceivedFile) => [file.field, file.name, file.digest];

/**
 * What the intake needs to take files: the limits, the budget shared by every request, and the
 * turns of the submissions that store files.
 */
export interface UploadRules {
  config: Config;
  budget: UploadBudget;
  /**
   * Storing a submission's files holds a connection of the store's pool for as long as their
   * bytes take to write: a burst of uploads taking turns leaves the pool to other requests.
   */
  fileWrites: TaskSlots;
  /** How fast bodies with files are read while other requests are in flight. */
  pace: UploadPace;
}

/** What a request holds until it is answered: bytes of the budget, and its count as an upload. */
interface Held {
  bytes: number;
  upload: UploadTurn | null;
}

interface ReadBody {
  fields: SubmittedFields;
  files: ReceivedFile[];
}

/**
 * A multipart body, read as it arrives. Before its first file, the request reserves what one
 * file may take in memory (the largest file, or less when the body is smaller): past the budget
 * of all requests, 503.
 */
async function readMultipartBody(
  request: FastifyRequest,
  form: IntakeForm,
  uploads: UploadRules,
  spool: UploadSpool,
  held: Held,
): Promise<ReadBody> {
  const { config, budget, pace } = uploads;
  const turn = pace.countUpload();
  held.upload = turn;
  const declared = Number(request.headers["content-length"]);
  const perFile = Number.isSafeInteger(declared)
    ? Math.min(declared, config.uploadMaxFileBytes)
    : config.uploadMaxFileBytes;
  const compress = form.settings.imageCompressionType ?? [];
  return readMultipart(
    request.body as Readable,
    String(request.headers["content-type"]),
    {
      maxFiles: config.uploadMaxFiles,
      maxFileBytes: config.uploadMaxFileBytes,
      maxTotalBytes: config.uploadMaxTotalBytes,
      maxOtherBytes: config.submissionBodyLimitBytes,
    },
    {
      beforeFirstFile() {
        if (!budget.reserve(perFile)) throw uploadsBusy();
        held.bytes = perFile;
      },
      newFile: () => spool.newFile(),
      keep: (arrived) => receiveFile(arrived, compress),
    },
    turn,
  );
}

/** Check 6: the body as fields and files, within the limits. */
async function readBody(
  request: FastifyRequest,
  form: IntakeForm,
  uploads: UploadRules,
  spool: UploadSpool,
  held: Held,
): Promise<ReadBody> {
  const contentType = String(request.headers["content-type"]);
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase();
  let read: ReadBody;
  if (mediaType === "multipart/form-data") {
    read = await readMultipartBody(request, form, uploads, spool, held);
  } else {
    const body = request.body as Buffer | undefined;
    if (!body || body.length === 0) throw invalid("body", "is empty");
    const fields = mediaType === "application/json" ? parseJsonObject(body) : parseUrlEncoded(body);
    read = { fields, files: [] };
  }
  if (read.fields.length === 0 && read.files.length === 0) throw invalid("body", "is empty");
  requireStorableText(read.fields);
  if (read.files.some((file) => file.field.length > MAX_FIELD_NAME_LENGTH)) {
    throw invalid("body", `has a field name longer than ${MAX_FIELD_NAME_LENGTH} characters`);
  }
  requireStorableText(read.files.map((file) => [file.field, ""]));
  return read;
}

/** Where a browser goes after sending: never a URL taken from the request. */
export function successLocation(form: Pick<IntakeForm, "id" | "plan" | "settings">): string {
  const settings = settingsWithDefaults(form.settings);
  return settings.useCustomRedirect && form.plan === "paid" && settings.customSuccessUrl !== ""
    ? settings.customSuccessUrl
    : `/f/${form.id}/thanks`;
}

/** The answer to an accepted submission, stored as it is sent so that a retry gets it again. */
function acceptedResponse(form: IntakeForm, id: string, html: boolean): StoredResponse {
  if (!html) return { status: 201, location: "", body: JSON.stringify({ ok: true, id }) };
  return { status: 303, location: successLocation(form), body: "" };
}

/** The hosted page's `_token`: one per page view, never stored; a malformed one is ignored. */
const PAGE_TOKEN = "_token";
const TOKEN_TEXT = /^[A-Za-z0-9_-]{16,64}$/;

/**
 * A hosted form's body without its page token, and the token as the idempotency key when the
 * request has no Idempotency-Key header: a double click or a resent post stores one submission.
 */
function withoutPageToken(form: IntakeForm, fields: SubmittedFields) {
  if (form.type !== "hosted") return { fields, pageToken: undefined };
  const token = fields.find(([name]) => name === PAGE_TOKEN)?.[1];
  return {
    fields: fields.filter(([name]) => name !== PAGE_TOKEN),
    pageToken: typeof token === "string" && TOKEN_TEXT.test(token) ? `page:${token}` : undefined,
  };
}

export interface Received {
  form: IntakeForm;
  country: string | null;
  client: IntakeClient;
  request: FastifyRequest;
  uploads: UploadRules;
  links: FileLinks;
  /** Whether the submission may be stored by one statement (see one-statement-intake.ts). */
  oneStatement: boolean;
  /** Relays the event a submission stored in one statement leaves in the outbox. */
  relay: Pick<EventRelay, "wake">;
}

/**
 * Checks 6 to 9 and the store. With an Idempotency-Key, a request already answered is answered
 * again before the captcha is asked (its token was spent), and the store runs at most once.
 */
export async function receiveSubmission(
  db: Database,
  intake: IntakeDependencies,
  received: Received,
): Promise<{ response: StoredResponse; replayed: boolean }> {
  const spool = new UploadSpool();
  const held: Held = { bytes: 0, upload: null };
  try {
    const body = await readBody(received.request, received.form, received.uploads, spool, held);
    return await acceptSubmission(db, intake, received, body);
  } finally {
    received.uploads.budget.release(held.bytes);
    held.upload?.done();
    await spool.dispose();
  }
}

/** Checks 7 to 9 and the store, once the body is read. */
async function acceptSubmission(
  db: Database,
  intake: IntakeDependencies,
  { form, country, client, request, links, uploads, oneStatement, relay }: Received,
  body: ReadBody,
): Promise<{ response: StoredResponse; replayed: boolean }> {
  const { fields, pageToken } = withoutPageToken(form, body.fields);
  const { files } = body;
  const key = idempotencyKeyOf(request) ?? pageToken;
  // Keys are the form's: respondents of different forms choose them independently.
  const keyed: KeyedRequest | null =
    key === undefined
      ? null
      : {
          organizationId: form.organizationId,
          key: `${form.id}:${key}`,
          requestHash: requestHash(
            files.length === 0 ? fields : [...fields, ["", files.map(fileFingerprint)]],
          ),
        };
  if (keyed) {
    const stored = await findStoredResponse(db, keyed);
    if (stored) return { response: stored, replayed: true };
  }
  const captcha = await checkCaptcha(form, fields, client.ip, intake.captcha);
  const hosted = checkAnswers(form, fields, files);
  const submission = buildSubmission(form, fields, captcha, client, country, new Date(), hosted);
  const response = acceptedResponse(form, submission.id, prefersHtml(request));
  // Before the transaction: the signing secret may be read from the store, which on the embedded
  // store's one connection would wait for the transaction.
  const linkOf = await links.signer();
  if (oneStatement && !keyed && files.length === 0 && needsOnlyItsRow(form, submission.createdAt)) {
    const eventLeft = await storeInOneStatement(db, submission, form, linkOf, intake.events.relay);
    if (eventLeft) relay.wake(form.id);
    return { response, replayed: false };
  }
  const store = async () => {
    if (!keyed) {
      await db.transaction((tx) => storeSubmission(tx, submission, form, intake.events, linkOf));
      return { response, replayed: false };
    }
    return respondOnce(db, keyed, async (tx) => {
      await storeSubmission(tx, submission, form, intake.events, linkOf);
      return response;
    });
  };
  return files.length > 0 ? uploads.fileWrites.run(store) : store();
}
