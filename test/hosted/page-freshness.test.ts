import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { changePlan } from "../../src/admin/admin.service.ts";
import type { Database, NotificationHandlers } from "../../src/db/database.ts";
import { FormViewCache } from "../../src/hosted/form-view-cache.ts";
import { findIntakeForm } from "../../src/intake/intake.repository.ts";
import { useTestApp } from "../helpers.ts";
import { BROWSER_ACCEPT, JSON_TYPE, newForm, post } from "../intake/intake-fixtures.ts";
import { startServer } from "../server/server-process.ts";
import { SAMPLE_FORM } from "./sample-form.ts";

const built = useTestApp();

const view = async (id: string) => {
  const page = await built.app.inject({ url: `/f/${id}`, headers: { accept: BROWSER_ACCEPT } });
  return { status: page.statusCode, html: page.body };
};
const titleOf = (html: string) => /<title>([^<]*)<\/title>/.exec(html)?.[1];
const CLOSED = /<h1>This form is closed<\/h1>/;
const isForm = (html: string) => html.includes('<form method="post"');
const ANSWERS = JSON.stringify({ name: "Ada", email: "ada@example.com", role: "Designer" });

/** Views `id` twice: from the second view on, the form is answered from memory. */
async function viewTwice(id: string) {
  await view(id);
  return view(id);
}

const api = (method: string, url: string, key: string, body?: unknown) =>
  built.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: { "api-key": key, ...(body !== undefined && { "content-type": JSON_TYPE }) },
    ...(body !== undefined && { payload: JSON.stringify(body) }),
  });

test("after an update the very next view shows it; after a deletion, the 404 page", async () => {
  const form = await newForm(built.app, SAMPLE_FORM);
  assert.equal(titleOf((await viewTwice(form.id)).html), "Project enquiry");
  for (const seoTitle of ["Renamed once", "Renamed twice"]) {
    await form.api.updateOk(form.id, { seoTitle });
    const page = await view(form.id);
    assert.deepEqual([page.status, titleOf(page.html)], [200, seoTitle]);
  }
  assert.equal((await api("DELETE", `/forms/${form.id}`, form.key)).statusCode, 204);
  const gone = await view(form.id);
  assert.equal(gone.status, 404);
  assert.match(gone.html, /<h1>Form not found<\/h1>/);
});

test("an endpoint form's thank-you page follows its updates too (endpoint forms are not kept)", async () => {
  const form = await newForm(built.app, { useCustomThankYouPage: true, tpHeader: "Thanks once" });
  const thanks = async () =>
    (await built.app.inject({ url: `/f/${form.id}/thanks`, headers: { accept: BROWSER_ACCEPT } }))
      .body;
  await thanks();
  assert.match(await thanks(), /Thanks once/);
  await form.api.updateOk(form.id, { tpHeader: "Thanks twice" });
  assert.match(await thanks(), /Thanks twice/);
});

test("isClosed closes the page at the next view, and reopening shows the form again", async () => {
  const form = await newForm(built.app, SAMPLE_FORM);
  assert.ok(isForm((await viewTwice(form.id)).html));
  await form.api.updateOk(form.id, { isClosed: true });
  const closed = await view(form.id);
  assert.deepEqual(
    [closed.status, CLOSED.test(closed.html), isForm(closed.html)],
    [200, true, false],
  );
  await view(form.id);
  await form.api.updateOk(form.id, { isClosed: false });
  assert.ok(isForm((await view(form.id)).html), "reopened");
});

test("the submission that reaches the limit closes the page; moving one into spam reopens it", async () => {
  const form = await newForm(built.app, { ...SAMPLE_FORM, limitResponses: true, maxResponses: 2 });
  const send = () => post(built.app, form.id, { body: ANSWERS, contentType: JSON_TYPE });
  assert.equal((await send()).status, 201);
  assert.ok(isForm((await viewTwice(form.id)).html), "one of two: still open");
  const last = await send();
  assert.equal(last.status, 201);
  assert.match((await view(form.id)).html, CLOSED);
  await view(form.id);
  const moved = await api("PATCH", `/forms/${form.id}/submissions/${last.body.id}`, form.key, {
    isSpam: true,
  });
  assert.equal(moved.statusCode, 200);
  assert.ok(isForm((await view(form.id)).html), "one of two again: open");
  const back = await api("PATCH", `/forms/${form.id}/submissions/${last.body.id}`, form.key, {
    isSpam: false,
  });
  assert.equal(back.statusCode, 200);
  assert.match((await view(form.id)).html, CLOSED, "out of spam: the limit holds again");
});

test("a view kept in memory ends at the form's deadline", async () => {
  const form = await newForm(built.app, SAMPLE_FORM);
  // A deadline to the second, as no setting can write one (they name minutes): stored directly,
  // before the form's first view, so no announcement is missed.
  const deadline = new Date(Date.now() + 1_500);
  await built.db.query("UPDATE forms SET auto_close_at = $2 WHERE id = $1", [form.id, deadline]);
  assert.ok(isForm((await viewTwice(form.id)).html));
  await sleep(deadline.getTime() - Date.now() + 50);
  assert.match((await view(form.id)).html, CLOSED);
});

test("the redirect the page carries follows the owner's plan", async () => {
  const form = await newForm(
    built.app,
    { ...SAMPLE_FORM, useCustomRedirect: true, customSuccessUrl: "https://example.com/done" },
    "paid",
  );
  assert.match((await viewTwice(form.id)).html, /"next":"https:\/\/example.com\/done"/);
  await changePlan(built.db, form.organizationId, "free");
  assert.match((await view(form.id)).html, new RegExp(`"next":"/f/${form.id}/thanks"`));
});

test("on PostgreSQL, a change made through one instance shows at the next view on another", {
  skip: !process.env.DATABASE_URL && "needs PostgreSQL: an embedded store has one process",
}, async () => {
  const server = await startServer({ DATABASE_URL: process.env.DATABASE_URL });
  const elsewhere = async (id: string) => {
    const page = await fetch(`${server.url}/f/${id}`);
    return { status: page.status, html: await page.text() };
  };
  const twiceElsewhere = async (id: string) => {
    await elsewhere(id);
    return elsewhere(id);
  };
  try {
    const form = await newForm(built.app, {
      ...SAMPLE_FORM,
      limitResponses: true,
      maxResponses: 1,
    });
    // Several rounds: a race between a change and the other instance's memory would not lose
    // every time.
    for (let round = 0; round < 5; round++) {
      assert.equal(
        titleOf((await twiceElsewhere(form.id)).html),
        round ? `round ${round - 1}` : "Project enquiry",
      );
      await form.api.updateOk(form.id, { seoTitle: `round ${round}` });
      assert.equal(titleOf((await elsewhere(form.id)).html), `round ${round}`);
    }
    const sent = await post(built.app, form.id, { body: ANSWERS, contentType: JSON_TYPE });
    assert.equal(sent.status, 201);
    assert.match((await elsewhere(form.id)).html, CLOSED, "the limit reached here closes it there");
    await form.api.updateOk(form.id, { maxResponses: 2, isClosed: false });
    assert.ok(isForm((await twiceElsewhere(form.id)).html), "reopened by raising the limit");
    await changePlan(built.db, form.organizationId, "paid");
    await form.api.updateOk(form.id, {
      useCustomRedirect: true,
      customSuccessUrl: "https://example.com/x",
    });
    assert.match((await twiceElsewhere(form.id)).html, /"next":"https:\/\/example.com\/x"/);
    await changePlan(built.db, form.organizationId, "free");
    assert.match((await elsewhere(form.id)).html, new RegExp(`"next":"/f/${form.id}/thanks"`));
    assert.equal((await api("DELETE", `/forms/${form.id}`, form.key)).statusCode, 204);
    assert.equal((await elsewhere(form.id)).status, 404);
  } finally {
    await server.stop();
  }
});

/**
 * A cache whose LISTEN connections the test stands in for, reading the real store: what is
 * tested is what it does when it hears, or cannot hear, announcements.
 */
function cacheWithListeners(db: Database) {
  const handlers = new Map<string, NotificationHandlers>();
  const listening = {
    // As the embedded store's: listening from `connected` on, with no writes to wait for.
    kind: "pglite",
    query: db.query.bind(db),
    listen(channel: string, given: NotificationHandlers) {
      handlers.set(channel, given);
      return async () => {};
    },
  } as unknown as Database;
  return { cache: new FormViewCache(listening), handlers: [...handlers.values()] };
}

test("a cache that lost a LISTEN connection reads every view from the store", async () => {
  const form = await newForm(built.app, SAMPLE_FORM);
  const { cache, handlers } = cacheWithListeners(built.db);
  let loads = 0;
  const load = () => {
    loads++;
    return findIntakeForm(built.db, form.id, new Date());
  };
  try {
    for (const handler of handlers) handler.connected(0);
    await cache.form(form.id, load);
    assert.equal((await cache.form(form.id, load))?.name, SAMPLE_FORM.name);
    assert.equal(loads, 1, "listening: the second view is answered from memory");
    for (const [i, lost] of handlers.entries()) {
      lost.disconnected();
      for (const name of [`lost ${i}`, `lost ${i} again`]) {
        // Changed behind the cache's back: only a read of the store can see it.
        await built.db.query("UPDATE forms SET name = $2 WHERE id = $1", [form.id, name]);
        assert.equal((await cache.form(form.id, load))?.name, name);
      }
      lost.connected(0);
    }
    assert.equal(loads, 5, "two channels, two views each while one was down");
  } finally {
    await cache.close();
  }
});
