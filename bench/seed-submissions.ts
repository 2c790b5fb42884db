import { createApiKey, createOrganization } from "../src/admin/admin.service.ts";
import type { Queryable } from "../src/db/database.ts";
import { DEFAULT_SETTINGS, type FormSettings } from "../src/forms/form-defaults.ts";
import { newId } from "../src/ids.ts";
import { checkpointAfterSeeding } from "./bench-database.ts";
import { seedForms } from "./seed-forms.ts";

/** A word that only the rare submissions contain: a search for it matches 5 of a form's rows. */
export const RARE_SUBMISSION_WORD = "quetzalcoatl";
export const RARE_SUBMISSIONS = 5;

/** Forms the spread intake posts to in turn. */
export const SPREAD_FORMS = 100;

/** The forms of the submissions scenarios, in one organization made anew on every run. */
export interface SubmissionsData {
  organizationId: string;
  /** A full-scope key of the organization. */
  key: string;
  /** Intake spread over these forms (default settings, nothing stored before the run). */
  spreadIds: string[];
  /** Intake into one form, without a limit. */
  oneId: string;
  /** Intake into one form with limitResponses on and a limit no run reaches. */
  limitedId: string;
  /** The form of `size` submissions that list, search and export read. */
  largeId: string;
  /** The form of 100 submissions: the list's p50 at the small end. */
  smallId: string;
}

const ORGANIZATION_NAME = "bench submissions";

async function setSettings(db: Queryable, formId: string, settings: Partial<FormSettings>) {
  await db.query("UPDATE forms SET settings = settings || $2::text::jsonb WHERE id = $1", [
    formId,
    JSON.stringify(settings),
  ]);
}

/**
 * Inserts `count` submissions into a form in one statement, like those the intake stores: a name,
 * an email and a message, the newest `RARE_SUBMISSIONS` spread evenly with the rare word in their
 * message when `rare` is set, created `ageDays` ago and up to a day before that.
 */
export async function seedSubmissions(
  db: Queryable,
  formId: string,
  count: number,
  { ageDays = 0, rare = false }: { ageDays?: number; rare?: boolean } = {},
) {
  await db.query(
    `INSERT INTO submissions (id, form_id, organization_id, is_spam, spam_reason, answers,
                              search_text, meta, created_at, updated_at)
     SELECT 'sub_' || translate(encode(decode(md5($1::text || ':' || $4::text || ':' || n), 'hex'),
                                       'base64'), '+/=', '-_'),
            f.id, f.organization_id, false, NULL,
            jsonb_build_array(
              jsonb_build_object('id', 'name', 'label', 'name', 'value', 'Respondent ' || n),
              jsonb_build_object('id', 'email', 'label', 'email', 'value', 'person' || n || '@example.com'),
              jsonb_build_object('id', 'message', 'label', 'message', 'value', rows.message)),
            'Respondent ' || n || E'\\n' || 'person' || n || '@example.com' || E'\\n' || rows.message,
            jsonb_build_object('ip', '203.0.113.' || (n % 250), 'country', 'DE',
                               'userAgent', 'Mozilla/5.0', 'referrer', NULL),
            rows.created_at, rows.created_at
       FROM forms f,
            LATERAL (SELECT n,
                            CASE WHEN $5 AND n % ($2::int / ${RARE_SUBMISSIONS}) = 0
                                      AND n <= $2::int / ${RARE_SUBMISSIONS} * ${RARE_SUBMISSIONS}
                                 THEN 'Tell ${RARE_SUBMISSION_WORD} I said hello, message ' || n
                                 ELSE 'Hello, I would like a quote for order ' || n END AS message,
                            now() - make_interval(days => $3::int) - random() * interval '1 day'
                              AS created_at
                       FROM generate_series(1, $2::int) AS n) AS rows
      WHERE f.id = $1`,
    [formId, count, ageDays, Date.now(), rare],
  );
}

/**
 * The submissions organization, made anew: the intake's forms, and the forms of `size` and of 100
 * submissions. Seeding a million submissions takes about a minute; the forms of the intake
 * scenarios start empty so that every run compares the same work.
 */
export async function prepareSubmissionsData(
  db: Queryable,
  size: number,
  log: (line: string) => void,
): Promise<SubmissionsData> {
  await db.query("DELETE FROM organizations WHERE name = $1", [ORGANIZATION_NAME]);
  const org = await createOrganization(db, { name: ORGANIZATION_NAME, plan: "paid" });
  await seedForms(db, org.id, SPREAD_FORMS + 4);
  // Seeded forms carry counts of their own; these start at zero, open, as new forms do.
  await db.query(
    `UPDATE forms SET submissions = 0, is_closed = false, type = 'endpoint'
      WHERE organization_id = $1`,
    [org.id],
  );
  const ids = (
    await db.query<{ id: string }>("SELECT id FROM forms WHERE organization_id = $1 ORDER BY id", [
      org.id,
    ])
  ).map((row) => row.id);
  const [oneId, limitedId, largeId, smallId] = ids.slice(SPREAD_FORMS) as [
    string,
    string,
    string,
    string,
  ];
  await setSettings(db, limitedId, { limitResponses: true, maxResponses: 1_000_000_000 });
  const started = performance.now();
  await seedSubmissions(db, largeId, size, { rare: true });
  await seedSubmissions(db, smallId, 100, { rare: true });
  await db.query("VACUUM ANALYZE submissions");
  await checkpointAfterSeeding(db, log);
  log(
    `seeded ${size.toLocaleString("en")} submissions in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const { key } = await createApiKey(db, {
    organizationId: org.id,
    scope: "full",
    name: "bench",
  });
  return {
    organizationId: org.id,
    key,
    spreadIds: ids.slice(0, SPREAD_FORMS),
    oneId,
    limitedId,
    largeId,
    smallId,
  };
}

/** A new form of the organization with `settings` over the defaults, for one scenario's run. */
export async function addForm(
  db: Queryable,
  organizationId: string,
  settings: Partial<FormSettings>,
): Promise<string> {
  const id = newId("form");
  await db.query(
    `INSERT INTO forms (id, organization_id, name, type, is_closed, submissions, settings,
                        created_at, updated_at)
     VALUES ($1, $2, 'Bench form', 'endpoint', false, 0, $3::text::jsonb, now(), now())`,
    [id, organizationId, JSON.stringify({ ...DEFAULT_SETTINGS, ...settings })],
  );
  return id;
}
