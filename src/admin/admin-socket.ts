import { mkdir, rm } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import type { Queryable } from "../db/database.ts";
import { errorBody } from "../errors.ts";
import { AdminError } from "./admin.service.ts";
import {
  type AdminCommand,
  AdminCommandError,
  type AdminResult,
  parseAdminCommand,
  runAdminCommand,
} from "./admin-commands.ts";

/**
 * The private channel through which the CLI reaches a running server. The embedded store is
 * one process's files: while a server has them open, the CLI must ask the server instead.
 */
export const adminSocketPath = (dataDir: string) => path.join(dataDir, "formdeck.sock");

// sun_path holds 108 bytes on Linux, the terminating NUL included.
const SOCKET_PATH_MAX_BYTES = 107;
const CLIENT_TIMEOUT_MS = 30_000;
// The details go to the server log, which the operator reads; the socket says only where.
const UNEXPECTED_FAILURE = errorBody(
  "internal_server_error",
  "the command failed: see the server log",
);

export interface AdminSocketLog {
  error(details: object, message: string): void;
}

export interface AdminSocket {
  /** Stops answering and removes the socket file. */
  close(): Promise<void>;
}

const fitsSocketPath = (socketPath: string) =>
  Buffer.byteLength(socketPath) <= SOCKET_PATH_MAX_BYTES;

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

function answersAt(socketPath: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", (error) => (isNoServer(error) ? resolve(false) : reject(error)));
  });
}

async function readCommand(request: http.IncomingMessage): Promise<AdminCommand> {
  if (request.method !== "POST") {
    throw new AdminCommandError("request: the admin socket accepts only POST");
  }
  // No size limit: only the owner of the process can connect, and it could do worse.
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new AdminCommandError("body: is not valid JSON");
  }
  return parseAdminCommand(value);
}

function reply(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

async function answer(
  db: Queryable,
  log: AdminSocketLog,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  try {
    reply(response, 200, await runAdminCommand(db, await readCommand(request)));
  } catch (error) {
    if (error instanceof AdminCommandError) {
      reply(response, 400, errorBody("bad_request", error.message));
    } else if (error instanceof AdminError) {
      reply(response, 404, errorBody("not_found", error.message));
    } else {
      log.error({ err: error }, "admin command failed");
      reply(response, 500, UNEXPECTED_FAILURE);
    }
  }
}

/** Error of a socket path another live process holds: it answers there. */
export class DataDirInUseError extends Error {
  constructor(socketPath: string) {
    super(`another formdeck process is already using this DATA_DIR (${path.dirname(socketPath)})`);
  }
}

function bind(server: http.Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    // bind() runs inside listen(), synchronously: with this umask the socket file never
    // exists, even for an instant, with a mode that lets other users connect.
    const previousUmask = process.umask(0o177);
    try {
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    } finally {
      process.umask(previousUmask);
    }
  });
}

const inUse = (error: unknown) => (error as NodeJS.ErrnoException).code === "EADDRINUSE";

/**
 * bind() is the atomic claim: of two processes starting together, one gets EADDRINUSE. Only a
 * file nobody answers on (its process crashed) is removed, and the claim made again.
 */
async function claim(server: http.Server, socketPath: string): Promise<void> {
  try {
    return await bind(server, socketPath);
  } catch (error) {
    if (!inUse(error)) throw error;
  }
  if (!(await answersAt(socketPath))) {
    await rm(socketPath, { force: true });
    try {
      return await bind(server, socketPath);
    } catch (error) {
      if (!inUse(error)) throw error;
    }
  }
  throw new DataDirInUseError(socketPath);
}

/**
 * Serves admin commands on a Unix socket only the owner of the process can open (mode 0600).
 * Throws DataDirInUseError when another live process holds `socketPath`. Whoever opens the
 * embedded store must hold its socket first, and treat this refusal as fatal: the CLI opens
 * the store itself whenever nobody answers on the socket.
 */
export async function listenAdminSocket(options: {
  db: Queryable;
  socketPath: string;
  log: AdminSocketLog;
}): Promise<AdminSocket> {
  const { db, socketPath, log } = options;
  if (!fitsSocketPath(socketPath)) {
    throw new Error(
      `the admin socket path ${socketPath} is longer than ${SOCKET_PATH_MAX_BYTES} bytes, the limit for Unix sockets: use a shorter DATA_DIR`,
    );
  }
  // The socket is claimed before the store is opened, which is what creates DATA_DIR otherwise.
  await mkdir(path.dirname(socketPath), { recursive: true });
  const server = http.createServer((request, response) => {
    void answer(db, log, request, response);
  });
  await claim(server, socketPath);
  return {
    // Node unlinks the socket files its servers created when they close.
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type AdminReply = { kind: "result"; result: AdminResult } | { kind: "no-server" };

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
  if (status === 400) throw new AdminCommandError(message);
  if (status === 404) throw new AdminError(message);
  throw new Error(message);
}

/**
 * Sends a command to the server listening on `socketPath`. Resolves `no-server` when nothing
 * listens there (no socket file, or one left by a crash) or the server closed the connection
 * before answering, so the caller may try again or open the store.
 */
export function sendAdminCommand(socketPath: string, command: AdminCommand): Promise<AdminReply> {
  // No server can listen on a path too long to bind (listenAdminSocket refuses it).
  if (!fitsSocketPath(socketPath)) return Promise.resolve({ kind: "no-server" });
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
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => {
          try {
            const body = Buffer.concat(chunks).toString("utf8");
            resolve({ kind: "result", result: settle(response.statusCode ?? 0, body) });
          } catch (error) {
            reject(error);
          }
        });
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
