// The download baseline: one file's bytes served by node:http from PostgreSQL with pg, as one
// writes it first: one query for the file's slices in order, each written as it comes, no key
// check, no headers beyond the defaults.
import http from "node:http";
import pg from "pg";
import { listenAddress, requiredEnv } from "./server-env.ts";

const fileId = requiredEnv("BENCH_FILE_ID");
const pool = new pg.Pool({ connectionString: requiredEnv("DATABASE_URL"), max: 10 });
pool.on("error", () => {});

http
  .createServer(async (_request, response) => {
    const { rows } = await pool.query<{ content: Buffer }>({
      name: "file",
      text: "SELECT content FROM submission_file_chunks WHERE file_id = $1 ORDER BY seq",
      values: [fileId],
    });
    response.writeHead(200, { "content-type": "text/plain" });
    for (const row of rows) response.write(row.content);
    response.end();
  })
  .listen(listenAddress());
