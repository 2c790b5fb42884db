import type { FastifyBaseLogger } from "fastify";
import nodemailer from "nodemailer";
import type { Database } from "../../db/database.ts";
import { asError, type BatchHandler } from "../../jobs/job-batches.ts";
import type { JobQueue } from "../../jobs/queue.ts";
import { nextAttemptAt } from "../../jobs/retry-schedule.ts";
import { EMAIL_QUEUE } from "../queues.ts";
import {
  type EmailMessage,
  findPendingEmails,
  type PendingEmail,
  recordAttempt,
  recordSentEmails,
  type SentEmail,
} from "./email-records.repository.ts";
import type { EmailJob } from "./enqueue-emails.ts";

/**
 * Emails sent at once by one instance, each on a connection of its own kept open between
 * messages: an SMTP exchange is mostly waiting on the server.
 */
const CONCURRENCY = 8;
/** Fetched by 2 statements of 4 (see JobQueue.work). */
const FETCHERS = 2;

export interface EmailWorkerOptions {
  db: Database;
  queue: JobQueue;
  log: Pick<FastifyBaseLogger, "warn" | "error">;
  smtpUrl: string;
  retryDelaysSeconds: readonly number[];
}

/** An attempt's outcome: sent (with the recipients refused, if any), or failed. */
type Outcome =
  | { sent: true; refused: string | null }
  | { sent: false; temporary: boolean; error: string };

interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
}

/** What lastError says of an SMTP error: its reply, else its message; never credentials. */
const describe = (error: SmtpError) =>
  (error.response ?? error.message).replace(/\s+/g, " ").slice(0, 500);

/**
 * SMTP 5xx is permanent; 4xx, connection failures and timeouts are temporary (notifications.md
 * §2). An error with no SMTP reply is one of the latter, or a failure to reach the server at all.
 */
function failure(error: SmtpError): Outcome {
  const code = error.responseCode;
  return { sent: false, temporary: !(code !== undefined && code >= 500), error: describe(error) };
}

type Transport = ReturnType<typeof nodemailer.createTransport>;

async function attempt(transport: Transport, message: EmailMessage): Promise<Outcome> {
  try {
    const info = await transport.sendMail({
      from: message.from,
      to: message.to,
      ...(message.replyTo ? { replyTo: message.replyTo } : {}),
      subject: message.subject,
      html: message.html,
      text: message.text,
    });
    const rejected = (info.rejectedErrors ?? []) as SmtpError[];
    const refused = rejected.length
      ? `refused: ${rejected.map((e) => `${(e as { recipient?: string }).recipient ?? "?"} (${describe(e)})`).join("; ")}`
      : null;
    return { sent: true, refused };
  } catch (error) {
    return failure(error as SmtpError);
  }
}

/**
 * Sends the emails of the queue on this instance. An attempt is made outside any transaction
 * (an SMTP exchange takes seconds); its outcome is recorded, and the next attempt enqueued, in
 * one. A job that runs again (after a crash) finds its attempt recorded and does nothing. The
 * returned function closes the connections kept open.
 */
export async function startEmailWorker(options: EmailWorkerOptions): Promise<{ close(): void }> {
  const { db, queue, log, retryDelaysSeconds } = options;
  const transport = nodemailer.createTransport({
    url: options.smtpUrl,
    // Connections kept open and reused, one per sending slot: a new SMTP connection per message
    // costs its greeting, EHLO and login round trips each time.
    pool: true,
    maxConnections: CONCURRENCY,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  /** One attempt; a sent email is returned, to be recorded with its batch's others. */
  const sendJob = async (
    { emailId, attempt: attemptsBefore }: EmailJob,
    email: PendingEmail | undefined,
  ): Promise<SentEmail | null> => {
    if (!email || email.attempts !== attemptsBefore) return null;
    const outcome = await attempt(transport, email.message);
    const endedAt = new Date();
    if (outcome.sent) return { id: emailId, attemptsBefore, refused: outcome.refused };
    await db.transaction(async (tx) => {
      const next = outcome.temporary
        ? nextAttemptAt(retryDelaysSeconds, attemptsBefore + 1, endedAt)
        : null;
      const status = next ? "pending" : "failed";
      if (!(await recordAttempt(tx, emailId, attemptsBefore, status, outcome.error))) return;
      if (next) {
        await queue.enqueue(
          tx,
          EMAIL_QUEUE,
          { emailId, attempt: attemptsBefore + 1 } satisfies EmailJob,
          { startAfter: next },
        );
      }
    });
    log.warn({ emailId, attempt: attemptsBefore + 1 }, "email: attempt failed");
    return null;
  };
  // A fetch's emails are read in one statement, and those sent recorded in one.
  const sendBatch: BatchHandler<EmailJob> = async (jobs) => {
    const pending = await findPendingEmails(
      db,
      jobs.map((job) => job.emailId),
    );
    const runs = await Promise.allSettled(
      jobs.map((job) => sendJob(job, pending.get(job.emailId))),
    );
    const sent = runs.flatMap((run) =>
      run.status === "fulfilled" && run.value ? [run.value] : [],
    );
    const recorded = await recordSentEmails(db, sent).then(
      () => null,
      (error: unknown) => asError(error),
    );
    return runs.map((run) => {
      if (run.status === "rejected") return asError(run.reason);
      return run.value ? recorded : null;
    });
  };
  await queue.workInBatches<EmailJob>(EMAIL_QUEUE, sendBatch, {
    concurrency: CONCURRENCY,
    fetchers: FETCHERS,
  });
  return { close: () => transport.close() };
}
