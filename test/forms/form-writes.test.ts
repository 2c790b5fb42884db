import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { KeyOwner } from "../../src/auth/api-keys.repository.ts";
import type { Database } from "../../src/db/database.ts";
import { insertFormsOnce, type KeyClaim } from "../../src/forms/create-once.repository.ts";
import type { Announcement } from "../../src/forms/form-changes.repository.ts";
import { FORM_CHANGES_CHANNEL } from "../../src/forms/form-changes.ts";
import { DEFAULT_SETTINGS } from "../../src/forms/form-defaults.ts";
import { patchForms } from "../../src/forms/form-patches.repository.ts";
import { findForms, insertForms, updateForms } from "../../src/forms/form-writes.repository.ts";
import { newFormRow } from "../../src/forms/forms.service.ts";
import { closeTestDatabase, createOrg, testDatabase } from "../helpers.ts";

// The statements that take many forms' writes at once (statement-batches.ts), each given
// several items at a time: every item gets its own row back, or null, whatever the others do.

let db: Database;
let owner: KeyOwner;

before(async () => {
  db = await testDatabase();
  const org = await createOrg("paid");
  owner = { organizationId: org.id, plan: "paid" } as KeyOwner;
});
after(closeTestDatabase);

const newForms = (...names: string[]) =>
  names.map((name) => newFormRow(owner, { name, type: "hosted" }, new Date()));

const announcement = (payload: string): Announcement => ({
  channel: FORM_CHANGES_CHANNEL,
  payload,
  listenerName: "nobody listens under this name",
  ownListenerPid: 0,
  listeners: -1,
});

/** A patch of the test organization's form, announced under its id and name. */
const formPatch = (
  formId: string,
  name: string | null,
  settings: Record<string, unknown>,
  isClosed: boolean | null,
) => ({
  organizationId: owner.organizationId,
  formId,
  name,
  settings,
  captchaSecret: null,
  isClosed,
  announcement: announcement(`${formId} ${name}`),
});

/** The stored name and closing switch of each form, as a plain read gives them. */
async function stored(ids: string[]) {
  const rows = await db.query<{ id: string; name: string; is_closed: boolean }>(
    "SELECT id, name, is_closed FROM forms WHERE id = ANY($1::text[]) ORDER BY name",
    [ids],
  );
  return rows.map(({ name, is_closed }) => ({ name, isClosed: is_closed }));
}

describe("batched form statements", () => {
  test("insertForms stores every item and answers each with its own row, in order", async () => {
    const forms = newForms("B first", "A second", "C third");
    const rows = await insertForms(db, forms);
    assert.deepEqual(
      rows.map((row) => [row.id, row.name, row.type, row.isClosed, row.settings]),
      forms.map((form) => [form.id, form.name, "hosted", false, DEFAULT_SETTINGS]),
    );
    assert.deepEqual(
      rows.map((row) => row.createdAt.toISOString()),
      forms.map((form) => form.createdAt.toISOString()),
    );
    assert.equal((await stored(forms.map((form) => form.id))).length, 3);
  });

  test("findForms answers null for a form missing or of another organization", async () => {
    const [mine] = await insertForms(db, newForms("Found"));
    const otherOrg = await createOrg("free");
    const [theirs] = await insertForms(db, [
      newFormRow(
        { organizationId: otherOrg.id, plan: "free" } as KeyOwner,
        { name: "Theirs" },
        new Date(),
      ),
    ]);
    assert.ok(mine && theirs);
    const found = await findForms(db, [
      { organizationId: owner.organizationId, formId: "form_missingmissingmissing1" },
      { organizationId: owner.organizationId, formId: mine.id },
      { organizationId: owner.organizationId, formId: theirs.id },
    ]);
    assert.deepEqual(
      found.map((row) => row && [row.id, row.name, row.submissions, typeof row.version]),
      [null, [mine.id, "Found", 0, "string"], null],
    );
  });

  test("patchForms writes each item; a missing form and a refused reopening are null", async () => {
    const forms = newForms("P1", "P2", "P3");
    await insertForms(db, forms);
    const [one, two, three] = forms.map((form) => form.id) as [string, string, string];
    // The third form limits its responses: reopening it is decided under its lock, not here.
    await patchForms(db, [
      {
        organizationId: owner.organizationId,
        formId: three,
        name: null,
        settings: { limitResponses: true, maxResponses: 5 },
        captchaSecret: null,
        isClosed: true,
        announcement: announcement("p3 first"),
      },
    ]);
    const patch = (formId: string, name: string | null, isClosed: boolean | null) =>
      formPatch(formId, name, { submitButtonText: `Send ${name}` }, isClosed);
    const rows = await patchForms(db, [
      patch(two, "P2 renamed", true),
      patch("form_missingmissingmissing1", "Nobody", null),
      patch(one, "P1 renamed", null),
      patch(three, null, false),
    ]);
    assert.deepEqual(
      rows.map((row) => row && [row.id, row.name, row.isClosed, row.settings.submitButtonText]),
      [
        [two, "P2 renamed", true, "Send P2 renamed"],
        null,
        [one, "P1 renamed", false, "Send P1 renamed"],
        null,
      ],
    );
    assert.deepEqual(await stored([one, two, three]), [
      { name: "P1 renamed", isClosed: false },
      { name: "P2 renamed", isClosed: true },
      { name: "P3", isClosed: true },
    ]);
  });

  test("patchForms applies several changes of one form in turn, each answered as it left the form", async () => {
    const forms = newForms("T1", "T2");
    await insertForms(db, forms);
    const [one, two] = forms.map((form) => form.id) as [string, string];
    const before = await db.query<{ id: string; revision: string; updated_at: Date }>(
      "SELECT id, revision::text, updated_at FROM forms WHERE id = ANY($1::text[]) ORDER BY id",
      [[one, two]],
    );
    const otherOrg = await createOrg("paid");
    const rows = await patchForms(db, [
      formPatch(one, "T1 first", { submitButtonText: "One" }, null),
      formPatch(two, null, { submitButtonText: "Two" }, true),
      formPatch(one, null, { respondentEmailSubject: "Thanks" }, true),
      // The same id under another organization: not its form.
      { ...formPatch(one, "Stolen", {}, null), organizationId: otherOrg.id },
      formPatch(one, "T1 third", {}, false),
      // Reopening under a limit ends the form's chain: it and the items after it wait for the lock.
      formPatch(two, null, { limitResponses: true, maxResponses: 0 }, false),
      formPatch(two, "T2 after the refusal", {}, null),
    ]);
    assert.deepEqual(
      rows.map(
        (row) =>
          row && [
            row.id,
            row.name,
            row.storedIsClosed,
            row.settings.submitButtonText,
            row.settings.respondentEmailSubject,
          ],
      ),
      [
        [one, "T1 first", false, "One", DEFAULT_SETTINGS.respondentEmailSubject],
        [two, "T2", true, "Two", DEFAULT_SETTINGS.respondentEmailSubject],
        [one, "T1 first", true, "One", "Thanks"],
        null,
        [one, "T1 third", false, "One", "Thanks"],
        null,
        null,
      ],
    );
    const [first, , third, , fifth] = rows as NonNullable<(typeof rows)[number]>[];
    assert.ok(first && third && fifth);
    // Each change its own instant, in the order they were applied.
    assert.ok(first.updatedAt < third.updatedAt && third.updatedAt < fifth.updatedAt);
    const after = await db.query<{ id: string; revision: string; updated_at: Date }>(
      "SELECT id, revision::text, updated_at FROM forms WHERE id = ANY($1::text[]) ORDER BY id",
      [[one, two]],
    );
    const revisions = new Map(before.map((row) => [row.id, BigInt(row.revision)]));
    const counted = new Map(
      after.map((row) => [row.id, BigInt(row.revision) - (revisions.get(row.id) ?? 0n)]),
    );
    // Each change counts, though the statement wrote each form's row once.
    assert.deepEqual([counted.get(one), counted.get(two)], [3n, 1n]);
    assert.equal(
      after.find((row) => row.id === one)?.updated_at.getTime(),
      fifth.updatedAt.getTime(),
    );
    assert.deepEqual(await stored([one, two]), [
      { name: "T1 third", isClosed: false },
      { name: "T2", isClosed: true },
    ]);
  });

  test("updateForms writes an item only if its row is still at the version read", async () => {
    const forms = newForms("U1", "U2");
    await insertForms(db, forms);
    const keys = forms.map((form) => ({ organizationId: owner.organizationId, formId: form.id }));
    const [read1, read2] = (await findForms(db, keys)) as [
      NonNullable<Awaited<ReturnType<typeof findForms>>[number]>,
      NonNullable<Awaited<ReturnType<typeof findForms>>[number]>,
    ];
    // The second form changes after it was read: its update must not overwrite that change.
    await patchForms(db, [
      {
        ...(keys[1] as (typeof keys)[number]),
        name: "U2 changed meanwhile",
        settings: {},
        captchaSecret: null,
        isClosed: null,
        announcement: announcement("meanwhile"),
      },
    ]);
    const update = (read: typeof read1, name: string) => ({
      organizationId: owner.organizationId,
      formId: read.id,
      version: read.version,
      name,
      storedIsClosed: true,
      autoCloseAt: null,
      settings: read.settings,
      captchaSecret: null,
      announcement: announcement(name),
    });
    const rows = await updateForms(db, [update(read1, "U1 updated"), update(read2, "U2 updated")]);
    assert.deepEqual(
      rows.map((row) => row && [row.id, row.name, row.isClosed]),
      [[read1.id, "U1 updated", true], null],
    );
    assert.deepEqual(await stored([read1.id, read2.id]), [
      { name: "U1 updated", isClosed: true },
      { name: "U2 changed meanwhile", isClosed: false },
    ]);
  });

  const claim = (key: string, name: string): KeyClaim => {
    const [form] = newForms(name) as [ReturnType<typeof newFormRow>];
    return {
      request: { organizationId: owner.organizationId, key, requestHash: `hash ${key}` },
      response: { status: 201, location: `/forms/${form.id}`, body: `{"name":"${name}"}` },
      form,
    };
  };
  const expiry = { lifetimeMs: 86_400_000 };

  test("insertFormsOnce creates a form per free key, none under a key already held", async () => {
    const held = claim("key held", "First under the key");
    assert.deepEqual(await insertFormsOnce(db, [held], expiry), [true]);
    const claims = [
      claim("key a", "Keyed A"),
      claim("key held", "Second under the key"),
      claim("key b", "Keyed B"),
    ];
    assert.deepEqual(await insertFormsOnce(db, claims, expiry), [true, false, true]);
    const ids = [held, ...claims].map((c) => c.form.id);
    assert.deepEqual(await stored(ids), [
      { name: "First under the key", isClosed: false },
      { name: "Keyed A", isClosed: false },
      { name: "Keyed B", isClosed: false },
    ]);
    const keys = await db.query<{ key: string; response_body: string }>(
      "SELECT key, response_body FROM idempotency_keys WHERE organization_id = $1 ORDER BY key",
      [owner.organizationId],
    );
    assert.deepEqual(keys, [
      { key: "key a", response_body: '{"name":"Keyed A"}' },
      { key: "key b", response_body: '{"name":"Keyed B"}' },
      { key: "key held", response_body: '{"name":"First under the key"}' },
    ]);
  });

  test("each item of a statement announces its own change to the instances that listen", {
    skip: !process.env.DATABASE_URL && "needs PostgreSQL: PGlite has no other instance",
  }, async () => {
    const forms = newForms("N1", "N2");
    await insertForms(db, forms);
    const heard: string[] = [];
    let listening: (pid?: number) => void = () => {};
    const connected = new Promise<number | undefined>((resolve) => {
      listening = resolve;
    });
    const stop = db.listen(FORM_CHANGES_CHANNEL, {
      message: (payload) => heard.push(payload),
      connected: (pid) => listening(pid),
      disconnected() {},
    });
    try {
      await connected;
      const change = (form: (typeof forms)[number], name: string) => ({
        organizationId: owner.organizationId,
        formId: form.id,
        name,
        settings: {},
        captchaSecret: null,
        isClosed: null,
        announcement: {
          ...announcement(`change of ${name}`),
          listenerName: `listen:${FORM_CHANGES_CHANNEL}`,
        },
      });
      const [n1, n2] = forms as [(typeof forms)[number], (typeof forms)[number]];
      // N1 twice: its changes are applied in turn by one statement, each announced.
      const items = [change(n1, "N1 renamed"), change(n2, "N2 renamed"), change(n1, "N1 again")];
      await patchForms(db, items);
      // Other suites' instances may listen on the same database too.
      assert.ok(items.every((item) => item.announcement.listeners >= 1));
      const deadline = Date.now() + 5_000;
      const ours = () => heard.filter((payload) => payload.startsWith("change of N"));
      while (ours().length < 3 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(ours().sort(), [
        "change of N1 again",
        "change of N1 renamed",
        "change of N2 renamed",
      ]);
    } finally {
      await stop();
    }
  });
});
