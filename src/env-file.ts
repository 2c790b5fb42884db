import { existsSync } from "node:fs";

// `.env` in the working directory, as `npm start` and `formdeck` document; variables already
// set win. Read here rather than with --env-file-if-exists, which prints a line on every start
// without one. Imported first by server.ts, so every module sees the variables.
if (existsSync(".env")) process.loadEnvFile(".env");
