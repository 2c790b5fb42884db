import { rm } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { Queryable } from "../db/database.ts";
import { errorBody } from "../http/errors.ts";
import {
  type AdminCommand,
  AdminCommandError,
  isStreamed,
  parseAdminCommand,
  runAdminCommand,
} from "./admin-commands.ts";
import { answersAt } from "./admin-socket-client.ts";
import { fitsSocketPath, OPERATOR_ERRORS, SOCKET_PATH_MAX_BYTES } from "./admin-socket-protocol.ts";
import { DataDirError } from "./data-dir.ts";
import { type ExportCommand, openSubmissionsExport } from "./submissions-export-command.ts";

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

/** The export as the API sends it, a batch at a time as the client reads it. */
async function sendExport(db: Queryable, command: ExportCommand, response: http.ServerResponse) {
  const exported = await openSubmissionsExport(db, command);
  response.writeHead(200, { "content-type": exported.contentType });
  await pipeline(exported.body, response);
}

async function answer(
  db: Queryable,
  log: AdminSocketLog,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  try {
    const command = await readCommand(request);
    if (isStreamed(command)) {
      await sendExport(db, command, response);
      return;
    }
    reply(response, 200, await runAdminCommand(db, command));
  } catch (error) {
    // Once an export has started, its status is sent: the connection is cut instead, which the
    // client reads as an export that stopped midway.
    if (response.headersSent) {
      log.error({ err: error }, "admin command failed");
      response.destroy();
      return;
    }
    const operatorError = OPERATOR_ERRORS.find((known) => error instanceof known.type);
    if (operatorError) {
      const { message } = error as Error;
      reply(response, operatorError.status, errorBody(operatorError.code, message));
    } else {
      log.error({ err: error }, "admin command failed");
      reply(response, 500, UNEXPECTED_FAILURE);
    }
  }
}

/** Error of a socket path another live process holds: it answers there. */
export class DataDirInUseError extends DataDirError {
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

/** Resolves false when the socket file already exists; any other failure still throws. */
async function bindUnlessTaken(server: http.Server, socketPath: string): Promise<boolean> {
  try {
    await bind(server, socketPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    return false;
  }
}

/**
 * bind() is the atomic claim: of two processes starting together, one gets EADDRINUSE. Only a
 * file nobody answers on (its process crashed) is removed, and the claim made again.
 */
async function claim(server: http.Server, socketPath: string): Promise<void> {
  if (await bindUnlessTaken(server, socketPath)) return;
  if (!(await answersAt(socketPath))) {
    await rm(socketPath, { force: true });
    if (await bindUnlessTaken(server, socketPath)) return;
  }
  throw new DataDirInUseError(socketPath);
}

/**
 * Serves admin commands on a Unix socket only the owner of the process can open (mode 0600).
 * Throws DataDirInUseError when another live process holds `socketPath`: a second check
 * behind the store's lock (openEmbeddedStore), for whoever removed the lock file by hand.
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
  const server = http.createServer((request, response) => {
    void answer(db, log, request, response);
  });
  await claim(server, socketPath);
  return {
    // Node unlinks the socket files its servers created when they close.
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
