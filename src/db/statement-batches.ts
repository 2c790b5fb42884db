import { type Database, isStoreUnreachable } from "./database.ts";

export interface BatchOptions<Item> {
  /** The most items one statement takes. */
  maxItems: number;
  /**
   * Items with the same key never share a statement: an `UPDATE … FROM` changes a row once, and
   * an `INSERT … ON CONFLICT DO UPDATE` fails on a row it would change twice. A second item of a
   * key (in the same batch, or one whose key the batch in flight holds) runs at once in a
   * statement of its own, beside the batch, as it would without batches: requests on one row at
   * the same time have no order between them, and the store's row lock makes them take turns
   * (waiting for the next batch instead made one busy row's writes take turns through round
   * trips: 0.4 times as many a second).
   */
  keyOf?: (item: Item) => string;
}

interface Waiting<Item, Result> {
  item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/**
 * Runs the calls of one statement that arrive together as one statement over arrays (`run` takes
 * the items and returns a result for each, in their order). Under load, a statement per request
 * costs the store a round trip, a plan's execution and a commit each: the write loads spent more
 * of the store's time there than on the rows. So at most one statement of each kind is in flight
 * per store: the calls that arrive meanwhile wait and go together in the next, which starts as
 * soon as the first ends. Alone, a call goes out at once (after the calls of the same turn of
 * the event loop), so a quiet server answers as fast as before.
 *
 * A statement commits whole or not at all, so a result is only ever given for a committed
 * write. When the store refuses a statement of several items (an error with the store's own
 * code, which rolled it back), each item runs again alone, so that only its own item fails; an
 * unreachable store, or a statement stopped by its timeout, fails them all, as it would each:
 * the statement may have committed, and none is repeated.
 */
export class StatementBatches<Item, Result> {
  private readonly waiting: Waiting<Item, Result>[] = [];
  private running = false;
  private scheduled = false;
  /** The keys of the batch in flight. */
  private readonly runningKeys = new Set<string>();

  private readonly run: (items: Item[]) => Promise<Result[]>;
  private readonly options: BatchOptions<Item>;

  constructor(run: (items: Item[]) => Promise<Result[]>, options: BatchOptions<Item>) {
    this.run = run;
    this.options = options;
  }

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const waiting = { item, resolve, reject };
      const key = this.options.keyOf?.(item);
      if (key !== undefined && this.runningKeys.has(key)) {
        void this.settle([waiting]);
        return;
      }
      this.waiting.push(waiting);
      this.schedule();
    });
  }

  private schedule() {
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    // After the calls of this turn: requests parsed together go together.
    setImmediate(() => {
      this.scheduled = false;
      void this.next();
    });
  }

  private async next() {
    const { batch, alone } = this.take();
    for (const waiting of alone) void this.settle([waiting]);
    if (batch.length === 0) return;
    this.running = true;
    const { keyOf } = this.options;
    if (keyOf) for (const waiting of batch) this.runningKeys.add(keyOf(waiting.item));
    try {
      await this.settle(batch);
    } finally {
      this.running = false;
      this.runningKeys.clear();
      if (this.waiting.length > 0) this.schedule();
    }
  }

  /**
   * The waiting items that go next, the oldest first: at most one per key in the batch, the
   * other items of a key `alone`, in statements of their own. Items beyond `maxItems` wait.
   */
  private take() {
    const { keyOf, maxItems } = this.options;
    const batch = this.waiting.splice(0, maxItems);
    const alone: Waiting<Item, Result>[] = [];
    if (!keyOf) return { batch, alone };
    const keys = new Set<string>();
    const distinct = batch.filter((waiting) => {
      const key = keyOf(waiting.item);
      if (keys.has(key)) {
        alone.push(waiting);
        return false;
      }
      keys.add(key);
      return true;
    });
    return { batch: distinct, alone };
  }

  private async settle(batch: Waiting<Item, Result>[]) {
    try {
      const results = await this.run(batch.map((waiting) => waiting.item));
      for (const [index, waiting] of batch.entries()) waiting.resolve(results[index] as Result);
    } catch (error) {
      if (batch.length === 1 || !refusedByStore(error)) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      for (const waiting of batch) await this.settle([waiting]);
    }
  }
}

/** An error the store answered with (its SQLSTATE), which rolled the statement back whole. */
function refusedByStore(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !isStoreUnreachable(error);
}

/**
 * One set of batches per store, made on first use. It takes the store itself, never one of its
 * transactions: a transaction's statements must run on its own connection.
 */
export function batchesPerStore<Batches extends object>(
  make: (db: Database) => Batches,
): (db: Database) => Batches {
  const made = new WeakMap<Database, Batches>();
  return (db) => {
    let batches = made.get(db);
    if (!batches) {
      batches = make(db);
      made.set(db, batches);
    }
    return batches;
  };
}
