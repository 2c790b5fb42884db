import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import net from "node:net";
import { test } from "node:test";
import {
  ELF,
  gifOfFrames,
  image,
  MULTIPART_TYPE,
  multipartBytes,
  type Part,
  pngClaiming,
  withExifBlock,
} from "../files/files-fixtures.ts";
import { field } from "../hosted/sample-form.ts";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { json, keepAliveAgent, type Reply } from "./support/http-client.ts";
import { createForm, exportAll, postIntake } from "./support/intake-api.ts";
import { sleep } from "./support/ports.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { storeFromEnvironment } from "./support/store.ts";
import { createTenants } from "./support/tenants.ts";

const LIMITS = { RATE_LIMIT_MAX: "1000000000", INTAKE_RATE_LIMIT_MAX: "1000000000" };

interface Case {
  what: string;
  parts: Part[] | Buffer;
  /** The form it is sent to. */
  form: "plain" | "compress" | "hosted";
  status: number;
  /** The error body's message, for a refusal. */
  message?: string;
  /** Checks the stored submission's record, for an acceptance. */
  stored?: (files: { name: string; type: string; size: number }[]) => void;
}

const refusedType = (field: string) => `${field}: file type not allowed`;
const file = (name: string, content: Buffer): Part[] => [{ name: "doc", file: { name, content } }];

async function peakRssMb(server: RunningServer) {
  const status = await readFile(`/proc/${server.child.pid}/status`, "utf8");
  return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]) / 1024;
}

/** Sends the head and `sent` bytes of a multipart body of `total`, then cuts the connection. */
async function cutMidFile(server: RunningServer, formId: string, total: number, sent: number) {
  const { hostname, port } = new URL(server.url);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.on("error", () => {});
  socket.write(
    `POST /f/${formId} HTTP/1.1\r\nHost: x\r\nContent-Type: ${MULTIPART_TYPE}\r\n` +
      `Content-Length: ${total}\r\nAccept: application/json\r\n\r\n`,
  );
  socket.write(multipartBytes(file("a.txt", Buffer.alloc(total, "a"))).subarray(0, sent));
  await sleep(300);
  socket.destroy();
}

async function cases(): Promise<Case[]> {
  const jpeg = await image("jpeg", 400, 300);
  const png = await image("png", 4, 4);
  return [
    {
      what: "a PNG whose header claims 50,000 × 50,000 pixels",
      parts: [{ name: "pic", file: { name: "a.png", content: pngClaiming(50_000, 50_000) } }],
      form: "compress",
      status: 422,
      message: "pic: image must be at most 100000000 pixels",
    },
    {
      what: "a truncated JPEG",
      parts: [{ name: "pic", file: { name: "a.jpg", content: jpeg.subarray(0, 3_000) } }],
      form: "compress",
      status: 422,
      message: "pic: image could not be read",
    },
    {
      what: "a JPEG with a 1 MB EXIF block",
      parts: file("photo.jpg", withExifBlock(jpeg, 1_000_000)),
      form: "compress",
      status: 201,
      stored: ([stored]) => assert.ok(stored && stored.size < 100_000, "the EXIF block is gone"),
    },
    {
      what: "a GIF of 10,000 frames",
      parts: file("a.gif", gifOfFrames(10_000)),
      form: "compress",
      status: 201,
      stored: ([stored]) => assert.equal(stored?.type, "image/gif"),
    },
    {
      what: "an HTML file named photo.png",
      parts: file("photo.png", Buffer.from("<html><script>alert(1)</script></html>")),
      form: "plain",
      status: 422,
      message: refusedType("doc"),
    },
    {
      what: "an ELF binary named cv.pdf",
      parts: file("cv.pdf", ELF),
      form: "plain",
      status: 422,
      message: refusedType("doc"),
    },
    {
      what: "an SVG with <script>",
      parts: file(
        "logo.svg",
        Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      ),
      form: "plain",
      status: 201,
      stored: ([stored]) => assert.equal(stored?.type, "image/svg+xml"),
    },
    {
      what: "a PDF/HTML polyglot",
      parts: file(
        "cv.html",
        Buffer.from("%PDF-1.4\n<html><script>alert(1)</script></html>\n%%EOF"),
      ),
      form: "plain",
      status: 201,
      stored: ([stored]) => assert.equal(stored?.type, "application/pdf"),
    },
    {
      what: "names ../../etc/passwd, a\\u0000b.png, 10 kB long, with an RTL override",
      parts: [
        "../../etc/passwd",
        "a\u0000b.png",
        `${"n".repeat(10_000)}.png`,
        "invoice\u202Egnp.exe",
      ].map((name, i) => ({ name: `f${i}`, file: { name, content: png } })),
      form: "plain",
      status: 201,
      stored: (files) => {
        const names = files.map((stored) => stored.name);
        assert.deepEqual([names[0], names[1], names[3]], ["passwd", "ab.png", "invoicegnp.exe"]);
        assert.equal(
          names[2],
          `${"n".repeat(251)}.png`,
          "the long name cut to 255 bytes, its extension kept",
        );
      },
    },
    {
      what: "1,001 parts",
      parts: Array.from({ length: 1_001 }, (_, i) => ({ name: `f${i}`, value: "x" })),
      form: "plain",
      status: 422,
      message: "body: must have at most 1000 fields",
    },
    {
      what: "a part header of 1 MB",
      parts: Buffer.from(
        `--FilesBoundary7MA4YWxkTrZu0gW\r\nContent-Disposition: form-data; name="a"\r\nX-Pad: ${"p".repeat(1_048_576)}\r\n\r\nx\r\n--FilesBoundary7MA4YWxkTrZu0gW--\r\n`,
      ),
      form: "plain",
      status: 413,
      message: "body: must be at most 1048576 bytes",
    },
    {
      what: "a file part under a hosted form's text field",
      parts: [{ name: "name", file: { name: "a.png", content: png } }],
      form: "hosted",
      status: 422,
      message: "name: does not take files",
    },
  ];
}

test("the hostile uploads, against a server process: each answered as the contract says, the server unharmed", async (t) => {
  const store = await storeFromEnvironment();
  let server: RunningServer | undefined;
  const agent = keepAliveAgent(60);
  try {
    figure(t, "store", store.name);
    server = await startServerWithin({ ...store.env, ...LIMITS });
    const running = server;
    const [tenant] = await createTenants(1, store.env, "hostile uploads");
    assert.ok(tenant);
    const forms = {
      plain: await createForm(running.url, agent, tenant.key, { name: "plain" }),
      compress: await createForm(running.url, agent, tenant.key, {
        name: "compress",
        imageCompressionType: ["png", "jpeg"],
      }),
      hosted: await createForm(running.url, agent, tenant.key, {
        name: "hosted",
        type: "hosted",
        fields: [field({ id: "name", subtype: "short_answer", label: "Name" })],
      }),
    };
    for (const hostile of await cases()) {
      const body = Buffer.isBuffer(hostile.parts) ? hostile.parts : multipartBytes(hostile.parts);
      const reply: Reply = await postIntake(running.url, agent, forms[hostile.form], body, {
        contentType: MULTIPART_TYPE,
        timeoutMs: 30_000,
      });
      figure(t, hostile.what, `${reply.status} in ${reply.latencyMs.toFixed(0)} ms`);
      assert.equal(reply.status, hostile.status, `${hostile.what}: ${reply.text.slice(0, 300)}`);
      if (hostile.message !== undefined) {
        const { error } = json<{ error: { message: string } }>(reply);
        assert.equal(error.message, hostile.message, hostile.what);
      }
      if (hostile.stored) {
        const { id } = json<{ id: string }>(reply);
        const [record] = await exportAll(running.url, agent, tenant.key, forms[hostile.form]).then(
          (rows) => rows.filter((row) => row.id === id),
        );
        hostile.stored(
          (record as unknown as { files: Parameters<NonNullable<Case["stored"]>>[0] }).files,
        );
      }
    }
    const storedBefore = (await exportAll(running.url, agent, tenant.key, forms.plain)).length;
    await cutMidFile(running, forms.plain, 3_000_000, 1_000_000);
    const after = await postIntake(
      running.url,
      agent,
      forms.plain,
      multipartBytes([{ name: "a", value: "1" }]),
      {
        contentType: MULTIPART_TYPE,
      },
    );
    assert.equal(after.status, 201, "answered after a body that stopped mid-file");
    assert.equal(
      (await exportAll(running.url, agent, tenant.key, forms.plain)).length,
      storedBefore + 1,
      "the cut body stored nothing",
    );
    figure(t, "a multipart body that stops mid-file", "nothing stored; the next upload 201");

    const big = multipartBytes(file("big.txt", Buffer.alloc(10_000_000, "a")));
    const started = performance.now();
    const burst = await Promise.all(
      Array.from({ length: 50 }, () =>
        postIntake(running.url, agent, forms.plain, big, {
          contentType: MULTIPART_TYPE,
          timeoutMs: 120_000,
        }),
      ),
    );
    const statuses = burst.map((reply) => reply.status);
    figure(
      t,
      "50 concurrent 10 MB uploads",
      `${statuses.filter((s) => s === 201).length} stored, ${statuses.filter((s) => s === 503).length} refused 503 ` +
        `in ${((performance.now() - started) / 1000).toFixed(1)} s; server peak RSS ${(await peakRssMb(running)).toFixed(0)} MB`,
    );
    assert.deepEqual(
      statuses.filter((s) => s !== 201 && s !== 503),
      [],
      "each stored or refused 503",
    );
    assert.equal(running.child.exitCode, null, "the server survived");
    assert.deepEqual(serverProblems(running, 50), [], "no error logged");
  } finally {
    agent.destroy();
    await killIfRunning(server);
    await store.cleanup();
  }
});
