import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // Search matches names in Unicode normalization form C, whatever form they were sent in
  // (`Café` typed as one code point or as `e` + U+0301), while the name is kept as sent. The
  // trigram index is on that normalized form, the expression the search filters on.
  // `normalize` is immutable and needs a UTF8 database, which PGlite and `createdb` give.
  name: "004_name_search_normalized",
  statements: [
    "CREATE INDEX forms_name_nfc_trigrams ON forms USING gin ((normalize(name, NFC)) gin_trgm_ops)",
    // Nothing filters on the name as sent any more: its index would only slow writes down.
    "DROP INDEX forms_name_trigrams",
  ],
};
