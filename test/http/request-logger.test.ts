import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import pino from "pino";
import { requestLoggerOf } from "../../src/http/request-logger.ts";

/** A pino logger at `level` whose lines are kept, parsed, in `lines`. */
function capturedLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level, base: null, timestamp: false }, sink), lines };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test("request.log writes what its level lets through, with the request's bindings", async () => {
  const { logger, lines } = capturedLogger("warn");
  const log = requestLoggerOf(logger)(logger, { reqId: "r-1" }, {});
  assert.equal(log.level, "warn");
  log.info("not written");
  log.debug({ detail: 1 }, "not written");
  log.warn({ code: 7 }, "written");
  log.child({ part: "child" }).error("from a child");
  log.silent("never");
  await settle();
  assert.deepEqual(lines, [
    { level: 40, reqId: "r-1", code: 7, msg: "written" },
    { level: 50, reqId: "r-1", part: "child", msg: "from a child" },
  ]);
});

test("request.log at info writes info lines; a level set on it applies to it alone", async () => {
  const { logger, lines } = capturedLogger("info");
  const log = requestLoggerOf(logger)(logger, { reqId: "r-2" }, {});
  log.info("incoming request");
  log.level = "error";
  log.warn("not written");
  log.error("written");
  assert.equal(logger.level, "info");
  await settle();
  assert.deepEqual(lines, [
    { level: 30, reqId: "r-2", msg: "incoming request" },
    { level: 50, reqId: "r-2", msg: "written" },
  ]);
});

test("a route's own level makes pino's child at once", async () => {
  const { logger, lines } = capturedLogger("warn");
  const log = requestLoggerOf(logger)(logger, { reqId: "r-3" }, { level: "debug" });
  log.debug("route debug");
  await settle();
  assert.deepEqual(lines, [{ level: 20, reqId: "r-3", msg: "route debug" }]);
});
