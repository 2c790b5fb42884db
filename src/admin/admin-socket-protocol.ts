import path from "node:path";
import { AdminError } from "./admin.service.ts";
import { AdminCommandError } from "./admin-commands.ts";

/**
 * The private channel through which the CLI reaches a running server. The embedded store is
 * one process's files: while a server has them open, the CLI must ask the server instead.
 */
export const adminSocketPath = (dataDir: string) => path.join(dataDir, "formdeck.sock");

// sun_path holds 108 bytes on Linux, the terminating NUL included.
export const SOCKET_PATH_MAX_BYTES = 107;

export const fitsSocketPath = (socketPath: string) =>
  Buffer.byteLength(socketPath) <= SOCKET_PATH_MAX_BYTES;

/**
 * The operator's mistakes, as the server reports them and the client throws them again: both
 * ends read this one table, so a command fails the same way through the socket as locally.
 */
export const OPERATOR_ERRORS = [
  { status: 400, code: "bad_request", type: AdminCommandError },
  { status: 404, code: "not_found", type: AdminError },
] as const;
