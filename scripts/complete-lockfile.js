#!/usr/bin/env node
// The registry mirror this project is built against serves Biome's binary only for the
// platforms of its machines, so `npm install` leaves Biome's other platform packages out of
// package-lock.json, and `npm ci` then refuses the lock file as out of sync. This adds them back
// as optional entries for their own os/cpu, which npm skips on every other platform.
// Run it after any change to dependencies: `node scripts/complete-lockfile.js`.
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const biome = lock.packages["node_modules/@biomejs/biome"];
let added = 0;
for (const name of Object.keys(biome?.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  const [, os, cpu, libc] = /cli-(\w+)-(\w+?)(?:-(musl))?$/.exec(name) ?? [];
  lock.packages[key] = {
    version: biome.version,
    cpu: [cpu],
    dev: true,
    license: biome.license,
    optional: true,
    os: [os],
    ...(libc && { libc: [libc] }),
    engines: biome.engines,
  };
  added++;
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => a.localeCompare(b)),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`complete-lockfile: ${added} platform entries added\n`);
