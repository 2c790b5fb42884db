// Intake at a steady rate, for the notifications bench: run as its own process (like load.ts),
// it posts to the forms in turn on a fixed schedule (open loop: a slow answer does not slow the
// next request) and prints, as JSON, each accepted submission's id with the instant its 201 had
// been read, on the wall clock with microseconds that the webhook receiver reads too.
import { text } from "node:stream/consumers";
import { Pool } from "undici";
import { intakeBody } from "./load-spec.ts";
import type { PacedIntakeResult, PacedIntakeSpec } from "./notification-scenarios.ts";

const spec = JSON.parse(await text(process.stdin)) as PacedIntakeSpec;
const pool = new Pool(spec.origin, { connections: 50 });
const now = () => performance.timeOrigin + performance.now();
const result: PacedIntakeResult = { acknowledged: [], intakeMs: [], others: {} };
const count = (key: string) => {
  result.others[key] = (result.others[key] ?? 0) + 1;
};

async function post(n: number): Promise<void> {
  const sentAt = now();
  try {
    const response = await pool.request({
      method: "POST",
      path: `/f/${spec.formIds[n % spec.formIds.length]}`,
      headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
      body: intakeBody(n),
    });
    const body = await response.body.text();
    if (response.statusCode === 201) {
      const at = now();
      result.acknowledged.push([(JSON.parse(body) as { id: string }).id, at]);
      result.intakeMs.push(Math.round((at - sentAt) * 10) / 10);
    } else {
      count(String(response.statusCode));
    }
  } catch {
    count("error");
  }
}

const total = Math.round(spec.ratePerSecond * spec.durationSeconds);
const started = performance.now();
const sent: Promise<void>[] = [];
for (let n = 0; n < total; n++) {
  const due = started + (n * 1000) / spec.ratePerSecond;
  const wait = due - performance.now();
  if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
  sent.push(post(n));
}
await Promise.all(sent);
await pool.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
