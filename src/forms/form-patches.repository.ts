import type { Queryable } from "../db/database.ts";
import { type ItemColumn, statementItems } from "../db/statement-items.ts";
import { type Announcement, announceEachColumn } from "./form-changes.repository.ts";
import type { FormSettings } from "./form-defaults.ts";
import {
  type Announced,
  announced,
  announcedById,
  assignments,
  FORM_KEY,
  type FormKey,
  nextVersion,
  PAYLOAD,
  sharedAnnouncement,
} from "./form-items.ts";
import { HOSTED, READS_CLOSED, WRITTEN_COLUMNS, type WrittenFormRow } from "./forms.repository.ts";

/** A change that needs nothing of the stored row but the row itself: see patchForms. */
export interface FormPatch extends FormKey {
  name: string | null;
  settings: Partial<FormSettings>;
  captchaSecret: string | null;
  isClosed: boolean | null;
  announcement: Announcement;
}

const FORM_PATCH: ItemColumn<FormPatch>[] = [
  ...FORM_KEY,
  { name: "name_in", type: "text", of: (patch) => patch.name },
  { name: "settings_in", type: "text", of: (patch) => JSON.stringify(patch.settings) },
  { name: "captcha_secret_in", type: "text", of: (patch) => patch.captchaSecret },
  { name: "is_closed_in", type: "boolean", of: (patch) => patch.isClosed },
  PAYLOAD,
];

/**
 * Merges each item's `settings` into the stored ones and sets the name and `isClosed` if given:
 * for changes that leave the auto-close deadline alone, which needs the stored row to compute.
 * A given `isClosed` is the switch from now on, and a deadline that has passed is spent with it,
 * as nextClosingState has it (closing.ts). Reopening (`isClosed: false`) a form whose settings
 * after the change limit its responses is left alone (null, as for a missing form): only a count
 * read under the form's lock can tell whether the limit still holds (see lockForm).
 *
 * Several items of one form are applied in turn, in their order, by one statement (patchInTurn):
 * each answered with the form as its own change left it.
 */
export function patchForms(
  db: Queryable,
  patches: FormPatch[],
): Promise<(WrittenFormRow | null)[]> {
  const forms = new Set(patches.map((patch) => patch.formId));
  return forms.size < patches.length ? patchInTurn(db, patches) : patchEach(db, patches);
}

/**
 * The row's columns after an item's change, as [column, value] from the row `stored` and the
 * item `item`.
 */
const nextState = (stored: string, item: string): [string, string][] => [
  ["name", `COALESCE(${item}.name_in, ${stored}.name)`],
  ["settings", `${stored}.settings || ${item}.settings_in::jsonb`],
  ["captcha_secret", `COALESCE(${item}.captcha_secret_in, ${stored}.captcha_secret)`],
  ["is_closed", `COALESCE(${item}.is_closed_in, ${stored}.is_closed)`],
  [
    "auto_close_at",
    `CASE WHEN ${item}.is_closed_in IS NOT NULL AND ${stored}.auto_close_at <= $1
          THEN NULL ELSE ${stored}.auto_close_at END`,
  ],
  ...nextVersion(stored),
];

const STATE_COLUMNS = nextState("", "").map(([column]) => column);

const selections = (state: [string, string][]) =>
  state.map(([column, value]) => `${value} AS ${column}`).join(", ");
const columnsOf = (relation: string) =>
  STATE_COLUMNS.map((column) => `${relation}.${column}`).join(", ");

/**
 * Whether the item reopens a form that its settings after the change limit (left alone). IS
 * FALSE: a rename or a closing decides here without merging the settings again.
 */
const refused = (stored: string, item: string) => `COALESCE(${item}.is_closed_in IS FALSE
  AND ((${stored}.settings || ${item}.settings_in::jsonb) ->> 'limitResponses')::boolean
  AND (${stored}.settings || ${item}.settings_in::jsonb) ->> 'maxResponses' IS NOT NULL, false)`;

/** Items of different forms: one `UPDATE … FROM` their relation. */
async function patchEach(db: Queryable, patches: FormPatch[]) {
  const item = statementItems(FORM_PATCH, patches, 2);
  const rows = await db.query<Announced>(
    `UPDATE forms SET ${assignments(nextState("forms", "item"))}
       FROM ${item.relation}
      WHERE organization_id = item.organization_id_in AND id = item.id_in
        AND NOT ${refused("forms", "item")}
      RETURNING ${WRITTEN_COLUMNS}, ${READS_CLOSED} AS "isClosed",
                ${announceEachColumn(2 + FORM_PATCH.length, HOSTED)}`,
    [new Date(), ...item.params, ...sharedAnnouncement(patches)],
  );
  return announcedById(rows, patches);
}

/**
 * Items of which some change the same form: an UPDATE changes a row once, so the statement locks
 * the forms, applies each form's items in turn from its stored row (`chain`, step 0 being the
 * stored row), writes each form's last state, and answers each item with the state its own step
 * left. A refused reopening ends its form's chain: it and the items after it are answered null
 * and go to the locked path one by one (form-updates.ts), as a missing form's items do.
 *
 * 50 connections changing one form otherwise took turns in the row's lock, a commit each, and
 * served 0.6 times what one plain UPDATE per request does (docs/performance.md).
 */
async function patchInTurn(db: Queryable, patches: FormPatch[]) {
  const item = statementItems(FORM_PATCH, patches, 2, true);
  const rows = await db.query<Announced & { n: string }>(
    `WITH RECURSIVE patch AS (
       SELECT item.*, row_number() OVER (PARTITION BY organization_id_in, id_in ORDER BY n) AS step
         FROM ${item.relation}
     ), stored AS (
       SELECT * FROM forms
        WHERE (organization_id, id) IN (SELECT organization_id_in, id_in FROM patch)
        ORDER BY id FOR UPDATE
     ), chain AS (
       SELECT id, organization_id, 0::int8 AS step, 0::int8 AS n, true AS written,
              ${columnsOf("stored")}
         FROM stored
       UNION ALL
       SELECT chain.id, chain.organization_id, patch.step, patch.n,
              NOT ${refused("chain", "patch")}, ${selections(nextState("chain", "patch"))}
         FROM chain
         JOIN patch ON patch.organization_id_in = chain.organization_id
                   AND patch.id_in = chain.id AND patch.step = chain.step + 1
        WHERE chain.written
     ), last AS (
       SELECT DISTINCT ON (id) * FROM chain WHERE written AND step > 0 ORDER BY id, step DESC
     ), changed AS (
       UPDATE forms SET ${STATE_COLUMNS.map((column) => `${column} = last.${column}`).join(", ")}
         FROM last WHERE forms.id = last.id
     )
     SELECT forms.n::text AS n, ${WRITTEN_COLUMNS}, ${READS_CLOSED} AS "isClosed",
            ${announceEachColumn(2 + FORM_PATCH.length, HOSTED)}
       FROM (SELECT chain.n, chain.id, chain.organization_id, stored.type, stored.created_at,
                    stored.submissions, ${columnsOf("chain")}
               FROM chain JOIN stored ON stored.id = chain.id
              WHERE chain.written AND chain.step > 0) AS forms
       JOIN patch AS item ON item.n = forms.n`,
    [new Date(), ...item.params, ...sharedAnnouncement(patches)],
  );
  const byOrdinal = new Map(rows.map(({ n, ...row }) => [Number(n), row]));
  return announced(
    patches.map((_, index) => byOrdinal.get(index + 1) ?? null),
    patches,
  );
}
