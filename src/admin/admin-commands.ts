import type { Plan, Scope } from "../auth/api-keys.ts";
import type { Queryable } from "../db/database.ts";
import {
  type ApiKeyView,
  changePlan,
  createApiKey,
  createOrganization,
  listAllOrganizations,
  listOrganizationKeys,
  type OrganizationView,
  revokeKey,
} from "./admin.service.ts";
import { EXPORT_FORMATS, type ExportCommand } from "./submissions-export-command.ts";

/** One administrative action: what the CLI asks for, run locally or sent to the admin socket. */
export type AdminCommand =
  | { type: "org.create"; name: string; plan: Plan }
  | { type: "org.list" }
  | { type: "org.plan"; organizationId: string; plan: Plan }
  | { type: "key.create"; organizationId: string; scope: Scope; name: string }
  | { type: "key.list"; organizationId: string }
  | { type: "key.revoke"; keyId: string }
  | ExportCommand;

/** The commands whose answer is one JSON document; the others stream theirs (an export). */
export type JsonCommand = Exclude<AdminCommand, ExportCommand>;

export const isStreamed = (command: AdminCommand): command is ExportCommand =>
  command.type === "submissions.export";

export type AdminResult =
  | OrganizationView
  | OrganizationView[]
  | ApiKeyView
  | ApiKeyView[]
  | (ApiKeyView & { key: string });

/** A command that is malformed (a bad plan, an empty name): the caller's mistake, not a failure. */
export class AdminCommandError extends Error {}

export async function runAdminCommand(db: Queryable, command: JsonCommand): Promise<AdminResult> {
  switch (command.type) {
    case "org.create":
      return createOrganization(db, { name: command.name, plan: command.plan });
    case "org.list":
      return listAllOrganizations(db);
    case "org.plan":
      return changePlan(db, command.organizationId, command.plan);
    case "key.create":
      return createApiKey(db, {
        organizationId: command.organizationId,
        scope: command.scope,
        name: command.name,
      });
    case "key.list":
      return listOrganizationKeys(db, command.organizationId);
    case "key.revoke":
      return revokeKey(db, command.keyId);
  }
}

const PLANS: readonly Plan[] = ["free", "paid"];
const SCOPES: readonly Scope[] = ["read", "full"];
const NAME_MAX_LENGTH = 200;
// Ids are a prefix and base64url; anything else cannot exist, and would only reach SQL and
// error messages (a newline, a NUL byte) to cause trouble there.
const ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;

type Fields = Record<string, unknown>;

function oneOf<T extends string>(fields: Fields, member: string, allowed: readonly T[]): T {
  const value = fields[member];
  if (typeof value === "string" && (allowed as readonly string[]).includes(value))
    return value as T;
  throw new AdminCommandError(`${member}: must be one of ${allowed.join(", ")}`);
}

function id(fields: Fields, member: string): string {
  const value = fields[member];
  if (typeof value === "string" && ID_PATTERN.test(value)) return value;
  throw new AdminCommandError(`${member}: must be an id (letters, digits, "_" and "-")`);
}

/** A label shown to operators: trimmed, not blank, bounded, and printable on one line. */
function name(fields: Fields): string {
  const value = fields.name;
  if (typeof value !== "string") throw new AdminCommandError("name: must be a string");
  const trimmed = value.trim();
  if (trimmed === "") throw new AdminCommandError("name: must not be empty");
  if (trimmed.length > NAME_MAX_LENGTH) {
    throw new AdminCommandError(`name: must be at most ${NAME_MAX_LENGTH} characters`);
  }
  if (/\p{Cc}/u.test(trimmed)) {
    throw new AdminCommandError("name: must not contain control characters");
  }
  return trimmed;
}

const MEMBERS: Record<AdminCommand["type"], readonly string[]> = {
  "org.create": ["name", "plan"],
  "org.list": [],
  "org.plan": ["organizationId", "plan"],
  "key.create": ["organizationId", "scope", "name"],
  "key.list": ["organizationId"],
  "key.revoke": ["keyId"],
  "submissions.export": ["formId", "format"],
};

const isCommandType = (value: unknown): value is AdminCommand["type"] =>
  typeof value === "string" && Object.hasOwn(MEMBERS, value);

/**
 * Checks a command that arrived as untrusted JSON (or was built from command-line flags) and
 * returns it normalized; throws AdminCommandError naming the offending member.
 */
export function parseAdminCommand(value: unknown): AdminCommand {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AdminCommandError("command: must be a JSON object");
  }
  const fields = value as Fields;
  const type = fields.type;
  if (!isCommandType(type)) {
    throw new AdminCommandError(`type: must be one of ${Object.keys(MEMBERS).join(", ")}`);
  }
  const extra = Object.keys(fields).find((key) => key !== "type" && !MEMBERS[type].includes(key));
  if (extra !== undefined) throw new AdminCommandError(`${extra}: is not accepted by ${type}`);
  switch (type) {
    case "org.create":
      return { type, name: name(fields), plan: oneOf(fields, "plan", PLANS) };
    case "org.list":
      return { type };
    case "org.plan":
      return {
        type,
        organizationId: id(fields, "organizationId"),
        plan: oneOf(fields, "plan", PLANS),
      };
    case "key.create":
      return {
        type,
        organizationId: id(fields, "organizationId"),
        scope: oneOf(fields, "scope", SCOPES),
        name: name(fields),
      };
    case "key.list":
      return { type, organizationId: id(fields, "organizationId") };
    case "key.revoke":
      return { type, keyId: id(fields, "keyId") };
    case "submissions.export":
      return {
        type,
        formId: id(fields, "formId"),
        format: oneOf(fields, "format", EXPORT_FORMATS),
      };
  }
}
