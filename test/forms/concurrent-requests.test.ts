import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createTenant, useTestApp } from "../helpers.ts";
import { type Body, client, expectedForm } from "./form-fixtures.ts";

// Requests that arrive together share statements (src/db/statement-batches.ts). Each must still
// get its own answer, and the store must hold every write, as if each had run alone.

const testApp = useTestApp();

async function tenant() {
  const { org, fullKey } = await createTenant("paid");
  return { org, api: client(testApp.app, fullKey) };
}

const range = (count: number) => Array.from({ length: count }, (_, index) => index);

describe("writes that arrive together", () => {
  test("creates: each answered with its own form, every one stored", async () => {
    const { org, api } = await tenant();
    const bodies = range(30).map((n) => ({
      name: `Form ${n}`,
      type: n % 2 ? "hosted" : "endpoint",
    }));
    const answers = await Promise.all(bodies.map((body) => api.create(body)));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      bodies.map(() => 201),
    );
    answers.forEach((answer, n) => {
      assert.deepEqual(answer.body, expectedForm(answer.body, bodies[n] as Body, org.id));
    });
    assert.equal(new Set(answers.map((answer) => answer.body.id)).size, 30);
    assert.equal(await api.total(), 30);
    for (const answer of answers) assert.deepEqual(await api.getOk(answer.body.id), answer.body);
  });

  test("updates of different forms: each answered with its own record, every one stored", async () => {
    const { api } = await tenant();
    const forms = await Promise.all(range(20).map((n) => api.createOk({ name: `Before ${n}` })));
    const changes = forms.map((_, n) =>
      n % 3 === 0
        ? { name: `After ${n}` }
        : n % 3 === 1
          ? { isClosed: true, submitButtonText: `Send ${n}` }
          : {
              autoCloseEnabled: true,
              autoCloseDate: `2099-01-0${(n % 9) + 1}`,
              autoCloseTime: "12:00",
              autoCloseTimezone: "Europe/Paris",
            },
    );
    const answers = await Promise.all(forms.map((form, n) => api.update(form.id, changes[n])));
    answers.forEach((answer, n) => {
      const form = forms[n] as Body;
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.body, {
        ...form,
        ...changes[n],
        updatedAt: answer.body.updatedAt,
      });
    });
    for (const answer of answers) assert.deepEqual(await api.getOk(answer.body.id), answer.body);
  });

  test("updates of one form: each applied on its own, in turn, none lost", async () => {
    const { api } = await tenant();
    const form = await api.createOk({ name: "Contended" });
    const changes = range(20).map((n) =>
      n % 2 ? { name: `Name ${n}` } : { submitButtonText: `Button ${n}` },
    );
    const answers = await Promise.all(changes.map((change) => api.update(form.id, change)));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      changes.map(() => 200),
    );
    // Each update moves updatedAt forward from the one before it: twenty distinct instants.
    const instants = answers.map((answer) => answer.body.updatedAt as string);
    assert.equal(new Set(instants).size, 20);
    // The answer with the latest instant is the state stored, and it holds the last name and the
    // last button text of the updates before it.
    const last = answers[instants.indexOf([...instants].sort().at(-1) as string)] as {
      body: Body;
    };
    assert.deepEqual(await api.getOk(form.id), last.body);
    const byTime = answers
      .map((answer, n) => ({ at: answer.body.updatedAt as string, change: changes[n] as Body }))
      .sort((a, b) => a.at.localeCompare(b.at));
    const expected = Object.assign({}, ...byTime.map((entry) => entry.change));
    assert.equal(last.body.name, expected.name);
    assert.equal(last.body.submitButtonText, expected.submitButtonText);
  });
});

describe("lists that arrive together", () => {
  test("each answers its own organization's page, as it does alone", async () => {
    const first = await tenant();
    const second = await tenant();
    for (const n of range(7)) {
      await first.api.createOk({ name: `First ${n}`, type: n % 2 ? "hosted" : "endpoint" });
    }
    for (const n of range(3)) await second.api.createOk({ name: `Second ${n}` });
    const queries = [
      { api: first.api, query: "" },
      { api: second.api, query: "" },
      { api: first.api, query: "?type=hosted" },
      { api: first.api, query: "?pageSize=2&page=3" },
      { api: second.api, query: "?sort=submissions&pageSize=2" },
      { api: first.api, query: "?page=9" },
      { api: second.api, query: "?type=hosted" },
    ];
    const alone = [];
    for (const { api, query } of queries) alone.push(await api.list(query));
    const together = await Promise.all(queries.map(({ api, query }) => api.list(query)));
    assert.deepEqual(
      together.map((answer) => [answer.status, answer.body]),
      alone.map((answer) => [answer.status, answer.body]),
    );
    // And the pages are what they should be, not only alike.
    assert.deepEqual(
      alone.map((answer) => [answer.body.meta.total, answer.body.data.length]),
      [
        [7, 7],
        [3, 3],
        [3, 3],
        [7, 2],
        [3, 2],
        [7, 0],
        [0, 0],
      ],
    );
    assert.deepEqual(
      alone[3]?.body.data.map((item: Body) => item.name),
      ["First 2", "First 1"],
    );
  });
});
