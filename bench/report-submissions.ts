import type { BenchReport } from "./bench-report.ts";
import { markdownTable } from "./report-table.ts";
import { RARE_SUBMISSION_WORD, RARE_SUBMISSIONS, SPREAD_FORMS } from "./seed-submissions.ts";
import { EXACT_LIMIT, SUBMISSION_SCENARIOS as S } from "./submission-scenarios.ts";

/** The "What is measured" item of the intake and submissions runs (issue 10). */
export function submissionsMethodology({ settings }: BenchReport): string {
  const size = settings.submissions.toLocaleString("en");
  return `- **Intake and submissions.** An organization made anew every run: ${SPREAD_FORMS} endpoint
  forms that "${S.intakeSpread}" posts to in turn (\`POST /f/{formId}\`, urlencoded, three short
  fields, answered as JSON), a form for "${S.intakeOneForm}" and one with \`limitResponses\` on
  and a limit no run reaches, each on a formdeck server of its own (its \`VmHWM\` is the intake's
  peak RSS). The baseline, _minimal handler_ (\`bench/servers/minimal-intake.ts\`), parses the
  body and, in one prepared statement (one transaction), reads the form, inserts the row into the
  same table and adds one to the form's counter. The four runs take turns, three rounds.
  "${S.intakeLimitExact}": 50 clients post to a new form with a limit of ${EXACT_LIMIT} until each
  is refused; accepted (201), stored and counted must all equal the limit. A form of ${size}
  submissions (seeded by \`generate_series\`, ${RARE_SUBMISSIONS} of them with
  "${RARE_SUBMISSION_WORD}") and one of 100: "${S.list}" at both, three rounds taking turns;
  "${S.searchOneClient}" with one connection; the CSV export of the large form read to its end
  three times on a server of its own, RSS sampled every 50 ms against its RSS before the first.
  Retention: ${size} submissions 60 days old in a form keeping 30 days, then a new formdeck server,
  whose retention pass runs at start: intake as above during the sweep (started once the pass,
  having walked the forms to the expired one, has deleted its first batch), then again once it
  is done; three rounds, each with new expired rows and a new server.`;
}

/** The export's rounds, for the page. */
export function exportTable({ submissions }: BenchReport): string {
  if (submissions.exports.length === 0) return "";
  const rows = submissions.exports.map((run, i) => [
    String(i + 1),
    run.rows.toLocaleString("en"),
    run.seconds.toFixed(1),
    run.rowsPerSecond.toLocaleString("en"),
    run.rssGrowthMb.toFixed(1),
  ]);
  const table = {
    header: ["round", "rows", "seconds", "rows/s", "RSS growth MB"],
    numeric: [true, true, true, true, true],
    rows,
  };
  return `\n### CSV export\n\n${markdownTable(table)}\n`;
}
