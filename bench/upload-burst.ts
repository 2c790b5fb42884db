/**
 * The uploads bench's burst, in a process of its own so that sending 500 MB never stalls the
 * process that times the other requests: 50 clients post a 10 MB file each to the form at once.
 * `node bench/upload-burst.ts <origin> <formId>`; prints a line `sending` as it starts, then the
 * statuses as JSON, {status: count}.
 */
import { multipartFile, postUpload } from "./upload-requests.ts";

const [origin, formId] = process.argv.slice(2);
const body = multipartFile("big.txt", Buffer.alloc(10_000_000, "a"));
process.stdout.write("sending\n");
const statuses = await Promise.all(
  Array.from({ length: 50 }, () => postUpload(origin as string, formId as string, body)),
);
const counts: Record<number, number> = {};
for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
process.stdout.write(JSON.stringify(counts));
