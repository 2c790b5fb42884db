import { open } from "node:fs/promises";

/**
 * The bytes of the file at `path`, in order, in slices of at most `sliceBytes`, each read into
 * the same buffer: a slice is valid until the next one is asked for. A read stream allocates a
 * buffer per read instead, outside V8's heap, where it stays until V8 next collects garbage, which
 * reading a file prompts too rarely: storing a 10 MB upload so left 10 MB of dead buffers behind
 * it (docs/decisions.md, "Memory").
 */
export async function* diskSlices(path: string, sliceBytes: number): AsyncGenerator<Buffer> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(sliceBytes);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, sliceBytes, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}
