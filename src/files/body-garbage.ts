import v8 from "node:v8";
import vm from "node:vm";
import type { Collect } from "../db/worker-heap-flags.ts";

/** How many bytes of request bodies are read between two collections of V8's young generation. */
export const BODY_BYTES_PER_COLLECTION = 16 * 1024 * 1024;

/**
 * V8's `gc` for this thread: the global one when the process was started with `--expose-gc`,
 * otherwise that of a context made while the flag is set, unset again at once so that no other
 * context gets it.
 */
export function threadGc(): Collect {
  const global = (globalThis as { gc?: Collect }).gc;
  if (typeof global === "function") return global;
  v8.setFlagsFromString("--expose-gc");
  try {
    return vm.runInNewContext("gc") as Collect;
  } finally {
    v8.setFlagsFromString("--no-expose-gc");
  }
}

/**
 * Collects V8's young generation after every `everyBytes` of request bodies read. Node copies
 * each chunk a socket reads into a buffer of its own, outside V8's heap, freed only once V8
 * collects the small object that holds it: a 64 kB chunk takes about a hundred bytes of the heap,
 * so reading bodies barely fills the young generation, and V8's other trigger waits for 64 MB of
 * such buffers to pile up. A burst of uploads so left 60 to 70 MB of dead chunks behind it,
 * memory the C library then keeps. A young collection takes about a millisecond; at 16 MB that
 * is a few a second for a server reading uploads as fast as loopback sends them.
 */
export class BodyGarbage {
  private readonly everyBytes: number;
  private readonly collect: Collect;
  private sinceCollection = 0;
  /** How many collections it ran. */
  collections = 0;

  constructor(everyBytes: number, collect: Collect) {
    this.everyBytes = everyBytes;
    this.collect = collect;
  }

  /** Counts bytes of a body just read. */
  read(bytes: number): void {
    this.sinceCollection += bytes;
    if (this.sinceCollection < this.everyBytes) return;
    this.sinceCollection = 0;
    this.collections++;
    this.collect({ type: "minor", execution: "sync" });
  }
}

/**
 * The process's: V8's heap is the thread's, whichever app reads the bodies. Made as the module
 * loads, before any store's thread starts, because the store sets the same V8 flag for its
 * thread while the thread starts (src/db/worker-heap-flags.ts).
 */
export const bodyGarbage = new BodyGarbage(BODY_BYTES_PER_COLLECTION, threadGc());
