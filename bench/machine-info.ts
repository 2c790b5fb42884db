import os from "node:os";
import type { Queryable } from "../src/db/database.ts";

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  postgres: string;
}

export async function machineInfo(db: Queryable): Promise<MachineInfo> {
  const [version] = await db.query<{ server_version: string }>("SHOW server_version");
  return {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.availableParallelism(),
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres: version?.server_version ?? "unknown",
  };
}
