import type { BenchReport } from "./bench-report.ts";
import {
  backlogSize,
  LATENCY_RATE,
  NOTIFICATION_SCENARIOS as N,
} from "./notification-scenarios.ts";

/** The "What is measured" item of the notifications runs (issue 13). */
export function notificationsMethodology({ settings }: BenchReport): string {
  const backlog = backlogSize(settings.durationSeconds).toLocaleString("en");
  return `- **Notifications.** A webhook receiver (\`bench/servers/webhook-receiver.ts\`, answers 204 at
  once and keeps each event's submission id and arrival instant) and an SMTP server
  (\`bench/servers/smtp-sink.ts\`, takes every message) in processes of their own, and a formdeck
  server sending to them (\`SMTP_URL\`, \`WEBHOOK_ALLOW_PRIVATE_NETWORKS=true\`). "${N.intakeNotified}"
  posts to 100 endpoint forms, each with an owner address in \`emailsToNotify\` and an enabled
  webhook to the receiver; "${N.intakePlain}" to 100 forms with neither, on the same server; the
  two take turns, three rounds, and after each notified run the workers deliver what it left
  (timed, not counted) before the next run starts. "${N.deliveries}": ${backlog} submission events
  enqueued in one transaction by the application's own code (the record of a real submission, its
  id changed), committed at once: deliveries per second is the receiver's arrival rate between
  the 10th and the 90th percentile of arrivals; three rounds. "${N.latency}": a client process
  (\`bench/paced-intake.ts\`) posts on a fixed schedule, ${LATENCY_RATE.PostgreSQL} a second on
  PostgreSQL and ${LATENCY_RATE.embedded} on the embedded store (a server on a new \`DATA_DIR\`,
  without SMTP), for the run's duration; each submission's delay is its event's arrival at the
  receiver minus the instant its 201 was read, on the same clock; three rounds, the target the
  median of their p50s. Every acknowledged submission's event must arrive.`;
}
