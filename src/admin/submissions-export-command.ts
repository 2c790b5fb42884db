import type { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { loadConfig } from "../config.ts";
import type { Queryable } from "../db/database.ts";
import { FileLinks } from "../files/file-links.ts";
import { exportSubmissions, type SubmissionExport } from "../submissions/submission-export.ts";
import { AdminError } from "./admin.service.ts";

export const EXPORT_FORMATS = ["csv", "ndjson"] as const;

/** `formdeck submissions export`: a form's submissions as the API's export sends them. */
export interface ExportCommand {
  type: "submissions.export";
  formId: string;
  format: (typeof EXPORT_FORMATS)[number];
}

/**
 * The export of the form's submissions (not spam, every one), byte for byte what
 * GET /api/v1/forms/{formId}/submissions/export answers its organization's keys. The operator
 * names a form, not an organization: the form's own is the one read.
 */
export async function openSubmissionsExport(
  db: Queryable,
  command: ExportCommand,
): Promise<SubmissionExport> {
  const [form] = await db.query<{ organizationId: string }>(
    `SELECT organization_id AS "organizationId" FROM forms WHERE id = $1`,
    [command.formId],
  );
  if (!form) throw new AdminError(`form ${command.formId} does not exist`);
  const owner = {
    keyId: "cli",
    organizationId: form.organizationId,
    scope: "read",
    plan: "paid",
  } as const;
  try {
    // Files' links are signed on PUBLIC_URL, as the server signs them.
    const links = new FileLinks(db, loadConfig().publicUrl);
    return await exportSubmissions(db, links, owner, command.formId, { format: command.format });
  } catch (error) {
    // Deleted between the two reads.
    if ((error as { code?: string }).code === "not_found") {
      throw new AdminError(`form ${command.formId} does not exist`);
    }
    throw error;
  }
}

/**
 * Copies `body` into `out` as `out` takes it (backpressure), so that memory holds about one
 * batch whatever the export's size; `out` is left open. A failure on either side stops both.
 */
export const copyInto = (body: Readable, out: Writable) => pipeline(body, out, { end: false });
