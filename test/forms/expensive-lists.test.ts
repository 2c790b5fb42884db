import assert from "node:assert/strict";
import { test } from "node:test";
import { createExpensiveListGate, ListBusyError } from "../../src/forms/expensive-lists.ts";

/** A piece of work that runs until `finish` is called. */
function held() {
  const done = Promise.withResolvers<void>();
  let started = false;
  return {
    work: async () => {
      started = true;
      await done.promise;
      return "done";
    },
    get started() {
      return started;
    },
    finish: () => done.resolve(),
  };
}

const refusal = (code: string, message: string) => (error: unknown) => {
  assert.ok(error instanceof ListBusyError);
  assert.deepEqual(
    [error.code, error.statusCode, error.message, error.retryAfterSeconds],
    [code, code === "rate_limit_exceeded" ? 429 : 503, message, 1],
  );
  return true;
};

test("an organization runs at most its share at once; the next waits, then is refused with 429", async () => {
  const gate = createExpensiveListGate({ perOrganization: 2, total: 4, waitMs: 20 });
  const [a, b, c] = [held(), held(), held()];
  const running = [gate.run("org-a", a.work), gate.run("org-a", b.work)];
  await assert.rejects(
    gate.run("org-a", c.work),
    refusal(
      "rate_limit_exceeded",
      "rate limit: at most 2 searches or deep pages at a time per organization; retry in 1 s",
    ),
  );
  assert.equal(c.started, false);
  // Another organization is not held up by it.
  const other = held();
  const otherRun = gate.run("org-b", other.work);
  other.finish();
  assert.equal(await otherRun, "done");
  a.finish();
  b.finish();
  assert.deepEqual(await Promise.all(running), ["done", "done"]);
});

test("a waiting request starts as soon as its organization's turn is free", async () => {
  const gate = createExpensiveListGate({ perOrganization: 1, total: 4, waitMs: 60_000 });
  const [first, second] = [held(), held()];
  const running = gate.run("org-a", first.work);
  const waiting = gate.run("org-a", second.work);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(second.started, false);
  first.finish();
  await running;
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(second.started, true);
  second.finish();
  assert.equal(await waiting, "done");
});

test("all organizations together hold at most `total`; one refused for lack of others' turns gets 503", async () => {
  const gate = createExpensiveListGate({ perOrganization: 2, total: 2, waitMs: 20 });
  const [a, b] = [held(), held()];
  const running = [gate.run("org-a", a.work), gate.run("org-b", b.work)];
  await assert.rejects(
    gate.run("org-c", async () => "never"),
    refusal("service_unavailable", "store: busy with other searches and deep pages; retry in 1 s"),
  );
  a.finish();
  b.finish();
  await Promise.all(running);
  // A failed piece of work gives its turn back too.
  await assert.rejects(
    gate.run("org-a", async () => Promise.reject(new Error("boom"))),
    /boom/,
  );
  assert.equal(await gate.run("org-a", async () => "again"), "again");
  assert.equal(await gate.run("org-a", async () => "and again"), "and again");
});
