import type { Queryable } from "../src/db/database.ts";
import { DEFAULT_SETTINGS } from "../src/forms/form-defaults.ts";

/** A word that no other seeded name contains: a search for it matches exactly 5 forms per org. */
export const RARE_WORD = "zephyr";
export const RARE_WORD_FORMS = 5;

const NAME_WORDS = [
  "Contact",
  "Feedback",
  "Newsletter signup",
  "Event registration",
  "Job application",
  "Customer survey",
  "Support request",
  "Order",
  "Booking",
  "Waitlist",
  "Quote request",
  "Volunteer",
];

/**
 * Inserts `count` forms into an organization in one statement, the way forms created through the
 * API would look: names like "Contact form 4812", about 70 % endpoint and 30 % hosted forms, 0 to
 * 10,000 submissions, created over the last year, settings equal to the defaults. Ids have the
 * project's shape (`form_` + 22 base64url characters), derived from the md5 of the organization
 * and the row number so that they are unique. Runs on PostgreSQL and PGlite alike.
 *
 * Rows 1, 1 + count/5, 1 + 2·count/5, … carry the rare word, so exactly 5 names contain it.
 */
export async function seedForms(db: Queryable, organizationId: string, count: number) {
  if (count < RARE_WORD_FORMS) throw new Error(`an organization needs at least 5 forms`);
  await db.query(
    `INSERT INTO forms (id, organization_id, name, type, is_closed, submissions, settings,
                        created_at, updated_at)
     SELECT 'form_' || translate(encode(decode(md5($1::text || ':' || n), 'hex'), 'base64'),
                                 '+/=', '-_'),
            $1::text,
            CASE WHEN (n - 1) % $3::int = 0 AND n <= $3::int * $4::int
                 THEN 'Zephyr ' || lower(word) || ' form ' || n
                 ELSE word || ' form ' || n END,
            CASE WHEN random() < 0.3 THEN 'hosted' ELSE 'endpoint' END,
            random() < 0.05,
            floor(random() * 10001)::int,
            $5::jsonb,
            created_at,
            created_at + (now() - created_at) * random()
       FROM (SELECT n,
                    ($6::text[])[1 + floor(random() * $7::int)::int] AS word,
                    now() - random() * interval '365 days' AS created_at
               FROM generate_series(1, $2::int) AS n) AS rows`,
    [
      organizationId,
      count,
      Math.floor(count / RARE_WORD_FORMS),
      RARE_WORD_FORMS,
      JSON.stringify(DEFAULT_SETTINGS),
      NAME_WORDS,
      NAME_WORDS.length,
    ],
  );
}
