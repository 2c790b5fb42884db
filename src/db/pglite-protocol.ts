/** Requests from pglite-store.ts to the store's thread (pglite-thread.ts). */
export type ThreadRequest = { id: number } & (
  | { op: "open" }
  | {
      op: "query";
      sql: string;
      params: unknown[] | undefined;
      transaction: number | null;
      script?: boolean;
    }
  | { op: "begin" }
  | { op: "end"; transaction: number; commit: boolean }
  | { op: "listen"; channel: string }
  | { op: "unlisten"; listener: number }
  | { op: "close" }
);

/** An answer to request `id`, or a notification for the listener that request `listener` made. */
export type ThreadReply =
  | { id: number; result: unknown }
  | { id: number; error: { message: string } & Record<string, unknown> }
  | { listener: number; payload: string };
