import { createApiKey, createOrganization } from "../src/admin/admin.service.ts";
import { field, SAMPLE_FIELDS } from "../test/hosted/sample-form.ts";
import { FORMS_PATH } from "./load-spec.ts";
import type { PostgresData } from "./measure-postgres.ts";
import { apiKeyHeader, type Measurer } from "./measurement.ts";
import { type RunningServer, startFormdeck, startRuntimeLimit } from "./servers.ts";

/** The hosted page's scenario (issue 12). */
export const HOSTED_PAGE = "hosted page, 20 fields";

/** The sample form's fields (every subtype, a page break, logic), and short answers to 20. */
const TWENTY_FIELDS = [
  ...SAMPLE_FIELDS,
  ...Array.from({ length: 20 - SAMPLE_FIELDS.length }, (_, i) =>
    field({ id: `extra_${i + 1}`, subtype: "short_answer", label: `One more question ${i + 1}` }),
  ),
];

/**
 * `GET /f/{formId}` of a hosted form of 20 fields, beside the runtime limit answering the same
 * bytes: the page is rendered once per version of its form, so only the per-view parts (nonce,
 * token) and whether the form is closed cost anything per request. Resolves to the page's size.
 */
export async function measureHostedPage(
  { databaseUrl, db }: PostgresData,
  measurer: Measurer,
  log: (line: string) => void,
): Promise<number | null> {
  if (!measurer.selects(HOSTED_PAGE)) return null;
  const organization = await createOrganization(db, { name: "bench hosted", plan: "free" });
  const { key } = await createApiKey(db, {
    organizationId: organization.id,
    scope: "full",
    name: "bench hosted",
  });
  const servers: RunningServer[] = [];
  try {
    const formdeck = await startFormdeck(databaseUrl);
    servers.push(formdeck);
    const created = await fetch(`${formdeck.origin}${FORMS_PATH}`, {
      method: "POST",
      headers: { ...apiKeyHeader(key), "content-type": "application/json" },
      body: JSON.stringify({ name: "Bench hosted form", type: "hosted", fields: TWENTY_FIELDS }),
    });
    if (created.status !== 201) {
      throw new Error(`hosted form: create answered ${created.status}: ${await created.text()}`);
    }
    const path = `/f/${((await created.json()) as { id: string }).id}`;
    const page = await (await fetch(`${formdeck.origin}${path}`)).text();
    log(`hosted page of ${TWENTY_FIELDS.length} fields: ${Buffer.byteLength(page)} bytes`);
    const runtimeLimit = await startRuntimeLimit(page);
    servers.push(runtimeLimit);
    await measurer.compare([
      {
        scenario: HOSTED_PAGE,
        forms: null,
        target: { server: formdeck, headers: {} },
        request: { kind: "get", path },
      },
      {
        scenario: HOSTED_PAGE,
        forms: null,
        target: { server: runtimeLimit, headers: {} },
        request: { kind: "get", path },
      },
    ]);
    return Buffer.byteLength(page);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}
