import { lstat } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import type { Writable } from "node:stream";
import type { AdminCommand, AdminResult, JsonCommand } from "./admin-commands.ts";
import { fitsSocketPath, OPERATOR_ERRORS } from "./admin-socket-protocol.ts";
import { copyInto, type ExportCommand } from "./submissions-export-command.ts";

const CLIENT_TIMEOUT_MS = 30_000;

/** ENOENT: no socket file; ECONNREFUSED: a file left behind by a process that is gone. */
const isNoServer = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ECONNREFUSED";
};

/**
 * A reset before any answer: the server closed while this connection still waited in its
 * backlog (a CLI holding the store stops as soon as its own command is done), unread.
 */
const isClosedUnread = (error: unknown) => (error as NodeJS.ErrnoException).code === "ECONNRESET";

/** Whether a live process listens on `socketPath`, as opposed to nothing or a stale file. */
export function answersAt(socketPath: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", (error) => (isNoServer(error) ? resolve(false) : reject(error)));
  });
}

export type AdminReply<T = AdminResult> = { kind: "result"; result: T } | { kind: "no-server" };

/** Turns the server's answer back into what runAdminCommand would have returned or thrown. */
function settle(status: number, body: string): AdminResult {
  let parsed: { error?: { message?: unknown } };
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new Error(`the formdeck admin socket answered ${status} with a body that is not JSON`);
  }
  if (status === 200) return parsed as AdminResult;
  const message = String(parsed?.error?.message ?? `the formdeck server answered ${status}`);
  const operatorError = OPERATOR_ERRORS.find((known) => known.status === status);
  throw operatorError ? new operatorError.type(message) : new Error(message);
}

/** The whole body of `response`, as text. */
async function bodyText(response: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Whether a socket file exists at `socketPath`; throws if it is not one this user's server
 * made (a socket owned by this user, mode 0600 or stricter), whose answers cannot be trusted.
 */
async function ownSocketExists(socketPath: string): Promise<boolean> {
  let stats: Awaited<ReturnType<typeof lstat>>;
  try {
    stats = await lstat(socketPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  const uid = process.getuid?.();
  const mode = stats.mode & 0o777;
  if (!stats.isSocket() || (uid !== undefined && stats.uid !== uid) || (mode & ~0o600) !== 0) {
    const found = stats.isSocket()
      ? `a socket of uid ${stats.uid} with mode 0${mode.toString(8)}`
      : "not a socket";
    throw new Error(
      `${socketPath} is not this user's own admin socket (${found}): refusing to send it commands; remove it if no formdeck server runs on this DATA_DIR`,
    );
  }
  return true;
}

/**
 * Sends `command` to the server listening on `socketPath` and hands its answer to `read`.
 * Resolves `no-server` when nothing listens there (no socket file, or one left by a crash) or
 * the server closed the connection before answering, so the caller may try again or open the
 * store.
 */
async function exchange<T>(
  socketPath: string,
  command: AdminCommand,
  read: (response: http.IncomingMessage) => Promise<T>,
): Promise<AdminReply<T>> {
  // No server can listen on a path too long to bind (listenAdminSocket refuses it).
  if (!fitsSocketPath(socketPath) || !(await ownSocketExists(socketPath))) {
    return { kind: "no-server" };
  }
  const body = JSON.stringify(command);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        socketPath,
        method: "POST",
        path: "/",
        agent: false,
        timeout: CLIENT_TIMEOUT_MS,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (response) => {
        read(response).then((result) => resolve({ kind: "result", result }), reject);
      },
    );
    request.on("timeout", () => {
      request.destroy(
        new Error(`the formdeck server did not answer within ${CLIENT_TIMEOUT_MS / 1000} s`),
      );
    });
    request.on("error", (error) =>
      isNoServer(error) || isClosedUnread(error) ? resolve({ kind: "no-server" }) : reject(error),
    );
    request.end(body);
  });
}

/** Sends a command to the server listening on `socketPath`: its result, or `no-server`. */
export function sendAdminCommand(socketPath: string, command: JsonCommand): Promise<AdminReply> {
  return exchange(socketPath, command, async (response) =>
    settle(response.statusCode ?? 0, await bodyText(response)),
  );
}

/**
 * Asks the server listening on `socketPath` for an export and copies it into `out` as it
 * arrives; throws as sendAdminCommand does when the server refuses, and when the answer breaks
 * off before its end (the server closes the connection when the export fails midway).
 */
export function streamAdminExport(
  socketPath: string,
  command: ExportCommand,
  out: Writable,
): Promise<AdminReply<void>> {
  return exchange(socketPath, command, async (response) => {
    if (response.statusCode !== 200) {
      settle(response.statusCode ?? 0, await bodyText(response));
      return;
    }
    let complete = false;
    response.once("end", () => {
      complete = true;
    });
    try {
      await copyInto(response, out);
    } catch (error) {
      throw complete ? error : new Error("the formdeck server stopped the export midway");
    }
    if (!complete) throw new Error("the formdeck server stopped the export midway");
  });
}
