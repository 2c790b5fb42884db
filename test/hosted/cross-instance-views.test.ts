import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { BROWSER_ACCEPT, newForm } from "../intake/intake-fixtures.ts";
import { type RunningServer, startServer } from "../server/server-process.ts";
import { SAMPLE_FORM } from "./sample-form.ts";

const databaseUrl = process.env.DATABASE_URL;
let built: Awaited<ReturnType<typeof buildTestApp>>;
let elsewhere: RunningServer;

before(async () => {
  built = await buildTestApp();
  if (databaseUrl) elsewhere = await startServer({ DATABASE_URL: databaseUrl });
});

after(async () => {
  await elsewhere?.stop();
  await built.close();
  await closeTestDatabase();
});

const viewElsewhere = async (id: string) => {
  const page = await fetch(`${elsewhere.url}/f/${id}`, { headers: { accept: BROWSER_ACCEPT } });
  return { status: page.status, html: await page.text() };
};
const titleOf = (html: string) => /<title>([^<]*)<\/title>/.exec(html)?.[1];

test("on PostgreSQL, a change to a form another instance holds shows at its very next view there", {
  skip: !databaseUrl && "needs PostgreSQL: an embedded store has one process",
}, async () => {
  // No limit of responses: the other instance keeps this form in memory from its first view, so
  // only the announcement that the update carries can make its next view see the change.
  const form = await newForm(built.app, SAMPLE_FORM);
  await viewElsewhere(form.id);
  // Several rounds: a race between a change and the other instance's memory would not lose
  // every time.
  for (let round = 0; round < 5; round++) {
    await form.api.updateOk(form.id, { seoTitle: `round ${round}` });
    const page = await viewElsewhere(form.id);
    assert.deepEqual([page.status, titleOf(page.html)], [200, `round ${round}`]);
    await viewElsewhere(form.id);
  }
  await form.api.updateOk(form.id, { isClosed: true });
  assert.match((await viewElsewhere(form.id)).html, /<h1>This form is closed<\/h1>/);
  const deleted = await built.app.inject({
    method: "DELETE",
    url: `/api/v1/forms/${form.id}`,
    headers: { "api-key": form.key },
  });
  assert.equal(deleted.statusCode, 204);
  assert.equal((await viewElsewhere(form.id)).status, 404);
});
