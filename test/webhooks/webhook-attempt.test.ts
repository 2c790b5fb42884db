import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import {
  type AddressPolicy,
  guardedAgent,
  isPublicAddress,
} from "../../src/webhooks/address-guard.ts";
import { newSecret, signedHeaders } from "../../src/webhooks/signing.ts";
import { attemptDelivery, retryAfterMs } from "../../src/webhooks/webhook-attempt.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

/** Names the tests resolve themselves: never the system resolver. */
const NAMES: Record<string, string[]> = {
  "receiver.test": ["127.0.0.1"],
  "private.test": ["10.0.0.7"],
  "mixed.test": ["93.184.215.14", "192.168.1.1"],
  "mapped.test": ["::ffff:127.0.0.1"],
};
const lookup = async (hostname: string) => NAMES[hostname] ?? [];
const guarded: AddressPolicy = { lookup, allowPrivateNetworks: false };
const open: AddressPolicy = { lookup, allowPrivateNetworks: true };

let receiver: Receiver;
before(async () => {
  receiver = await startReceiver((res, index) => {
    if (index === 0) res.writeHead(200, { "content-type": "text/plain" }).end("thanks");
    else res.writeHead(204).end();
  });
});
after(() => receiver.close());

const body = JSON.stringify({ type: "webhook.test", data: { form: { id: "f", name: "é" } } });

describe("signing", () => {
  test("a receiver verifies the headers with the standardwebhooks library, with either secret", async () => {
    const current = newSecret();
    const previous = newSecret();
    const agent = guardedAgent(open, 5_000);
    const at = new Date();
    const headers = signedHeaders([current, previous], "msg_1", at, body);
    const result = await attemptDelivery(agent, receiver.url, headers, body);
    assert.equal(result.statusCode, 200);
    assert.equal(result.responseBody, "thanks");
    assert.equal(result.error, null);
    const got = receiver.received.at(-1);
    assert.ok(got);
    assert.equal(got.body, body);
    assert.equal(got.headers["content-type"], "application/json");
    assert.equal(got.headers["webhook-id"], "msg_1");
    assert.equal(got.headers["webhook-timestamp"], String(Math.floor(at.getTime() / 1000)));
    const signatures = String(got.headers["webhook-signature"]).split(" ");
    assert.equal(signatures.length, 2);
    const receivedHeaders = got.headers as Record<string, string>;
    for (const secret of [current, previous]) {
      assert.deepEqual(new Webhook(secret).verify(got.body, receivedHeaders), JSON.parse(body));
    }
    assert.equal(signatures[0], new Webhook(current).sign("msg_1", at, body));
    assert.throws(() => new Webhook(newSecret()).verify(got.body, receivedHeaders));
    assert.throws(() => new Webhook(current).verify(`${got.body} `, receivedHeaders));
    await agent.close();
  });
});

describe("the SSRF guard at delivery", () => {
  test("ipaddr.js's unicast range only", () => {
    for (const address of ["93.184.215.14", "8.8.8.8", "2606:4700::1111"]) {
      assert.equal(isPublicAddress(address), true, address);
    }
    const refused = [
      "127.0.0.1",
      "10.0.0.1",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "255.255.255.255",
      "224.0.0.1",
      "192.0.2.1",
      "::1",
      "::",
      "fd00::1",
      "fe80::1",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:8.8.8.8",
      "64:ff9b::a00:1",
      "2002:a00:1::",
      "2001:db8::1",
      "not an address",
    ];
    for (const address of refused) assert.equal(isPublicAddress(address), false, address);
  });

  test("IP literals in every notation and names resolving to private addresses are refused unsent", async () => {
    const agent = guardedAgent(guarded, 5_000);
    const count = receiver.received.length;
    const port = receiver.port;
    const cases: [string, string][] = [
      [`http://127.0.0.1:${port}/`, "127.0.0.1"],
      [`http://127.1:${port}/`, "127.0.0.1"],
      [`http://0x7f000001:${port}/`, "127.0.0.1"],
      [`http://2130706433:${port}/`, "127.0.0.1"],
      [`http://[::ffff:127.0.0.1]:${port}/`, "::ffff:7f00:1"],
      [`http://[::1]:${port}/`, "::1"],
      ["http://169.254.169.254/latest/meta-data", "169.254.169.254"],
      ["http://100.64.0.1/", "100.64.0.1"],
      ["https://[fd00::1]/", "fd00::1"],
      [`http://receiver.test:${port}/`, "127.0.0.1"],
      ["https://private.test/", "10.0.0.7"],
      ["https://mixed.test/", "192.168.1.1"],
      [`http://mapped.test:${port}/`, "::ffff:127.0.0.1"],
    ];
    for (const [url, address] of cases) {
      const result = await attemptDelivery(agent, url, {}, body);
      assert.deepEqual(
        { statusCode: result.statusCode, error: result.error, responseBody: result.responseBody },
        { statusCode: null, error: `address not allowed: ${address}`, responseBody: null },
        url,
      );
    }
    assert.equal(receiver.received.length, count);
    await agent.close();
  });

  test("the connection goes to the address the lookup gave, under the name's Host", async () => {
    const agent = guardedAgent(open, 5_000);
    const result = await attemptDelivery(
      agent,
      `http://receiver.test:${receiver.port}/x`,
      {},
      body,
    );
    assert.equal(result.statusCode, 204);
    assert.equal(receiver.received.at(-1)?.headers.host, `receiver.test:${receiver.port}`);
    const unknown = await attemptDelivery(agent, "http://nowhere.test/", {}, body);
    assert.equal(unknown.statusCode, null);
    assert.equal(unknown.error, "nowhere.test: the name resolves to no address");
    await agent.close();
  });
});

describe("an attempt", () => {
  test("a 10 MB answer: only its first 4,096 bytes are read and kept; the outcome is the status", async () => {
    const big = await startReceiver((res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, "a");
      let sent = 0;
      const write = () => {
        while (sent < 10 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", write);
        }
        res.end();
      };
      write();
    });
    const agent = guardedAgent(open, 5_000);
    const result = await attemptDelivery(agent, big.url, {}, body);
    assert.equal(result.statusCode, 200);
    assert.equal(result.error, null);
    assert.equal(result.responseBody, "a".repeat(4096));
    await agent.close();
    await big.close();
  });

  test("redirects are not followed; 3xx, 4xx and 5xx fail the attempt", async () => {
    const target = await startReceiver();
    const answers = [302, 307, 400, 500];
    const redirecting = await startReceiver((res, index) =>
      res.writeHead(answers[index] as number, { location: target.url }).end("no"),
    );
    const agent = guardedAgent(open, 5_000);
    for (const status of answers) {
      const result = await attemptDelivery(agent, redirecting.url, {}, body);
      assert.deepEqual(
        { statusCode: result.statusCode, error: result.error, responseBody: result.responseBody },
        { statusCode: status, error: `the receiver answered ${status}`, responseBody: "no" },
      );
    }
    assert.equal(target.received.length, 0);
    await agent.close();
    await Promise.all([target.close(), redirecting.close()]);
  });

  test("a receiver that never answers: the attempt ends at its time limit", async () => {
    const silent = await startReceiver(() => {});
    const agent = guardedAgent(open, 5_000);
    const started = Date.now();
    const result = await attemptDelivery(agent, silent.url, {}, body, 300);
    assert.ok(Date.now() - started < 2_000);
    assert.deepEqual(
      { statusCode: result.statusCode, error: result.error },
      { statusCode: null, error: "timed out after 0.3 s" },
    );
    await agent.close();
    await silent.close();
  });

  test("credentials in the URL are sent as Basic authorization", async () => {
    const agent = guardedAgent(open, 5_000);
    const url = `http://hook%40user:p%3Ass@127.0.0.1:${receiver.port}/auth`;
    const result = await attemptDelivery(agent, url, {}, body);
    assert.equal(result.error, null);
    const got = receiver.received.at(-1);
    assert.equal(
      got?.headers.authorization,
      `Basic ${Buffer.from("hook@user:p:ss").toString("base64")}`,
    );
    await agent.close();
  });

  test("a receiver that is down: a failed attempt with the connection's error", async () => {
    const gone = await startReceiver();
    await gone.close();
    const agent = guardedAgent(open, 5_000);
    const result = await attemptDelivery(agent, gone.url, {}, body);
    assert.equal(result.statusCode, null);
    assert.match(result.error ?? "", /ECONNREFUSED/);
    await agent.close();
  });

  test("Retry-After: seconds or an HTTP date, at most a day", () => {
    const now = new Date("2026-11-23T12:00:00.000Z");
    assert.equal(retryAfterMs("120", now), 120_000);
    assert.equal(retryAfterMs("Mon, 23 Nov 2026 12:10:00 GMT", now), 600_000);
    assert.equal(retryAfterMs("Mon, 23 Nov 2026 11:00:00 GMT", now), 0);
    assert.equal(retryAfterMs("999999", now), 86_400_000);
    assert.equal(retryAfterMs("soon", now), null);
    assert.equal(retryAfterMs(undefined, now), null);
  });
});
