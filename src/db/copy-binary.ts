import type pg from "pg";

/**
 * `COPY (…) TO STDOUT (FORMAT binary)` on a pg client, as pg's query interface (a "submittable")
 * takes it: the only way pg hands over bytes that were not turned into text first. A `bytea`
 * read by a query arrives as hex or base64 text, which the server encodes, the driver decodes
 * from UTF-8 into a string and the caller decodes again: for a file slice of 1 MiB, three passes
 * over 1.4 to 2 MB and a string as large for the collector.
 */
class CopyBinaryOut {
  private readonly text: string;
  private readonly messages: Buffer[] = [];
  private error: Error | null = null;
  callback?: (error: Error | null, messages?: Buffer[]) => void;

  constructor(text: string) {
    this.text = text;
  }

  submit(connection: { query(text: string): void }) {
    connection.query(this.text);
  }

  handleCopyData(message: { chunk: Buffer }) {
    // The chunk is a view of the driver's read buffer, which it reuses: copied at once.
    this.messages.push(Buffer.from(message.chunk));
  }

  handleError(error: Error) {
    // The driver stops sending this query anything after an error: it ends here.
    this.error = error;
    this.callback?.(error);
  }

  handleReadyForQuery() {
    if (!this.error) this.callback?.(null, this.messages);
  }

  // Messages a COPY out never gets, which the driver may still ask a query to take.
  handleCommandComplete() {}
  handleRowDescription() {}
  handleDataRow() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}
}

const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");

/**
 * The first column of each row that `copy` sends, as bytes (null for NULL). `copy` is a
 * `COPY (SELECT …) TO STDOUT (FORMAT binary)`; COPY takes no parameters, so its values are
 * passed in session settings it reads with `current_setting`, set by the statement before it.
 */
export function copyBinaryColumn(client: pg.PoolClient, copy: string): Promise<(Buffer | null)[]> {
  return new Promise((resolve, reject) => {
    const submittable = new CopyBinaryOut(copy);
    submittable.callback = (error, messages) => {
      if (error) reject(error);
      else resolve(firstColumns(Buffer.concat(messages ?? [])));
    };
    void client.query(submittable as unknown as pg.QueryConfig);
  });
}

/** Reads the binary COPY format: its header, then rows of fields (a length, then bytes). */
function firstColumns(data: Buffer): (Buffer | null)[] {
  if (!data.subarray(0, SIGNATURE.length).equals(SIGNATURE)) {
    throw new Error("COPY: not the binary format's signature");
  }
  const extension = data.readUInt32BE(SIGNATURE.length + 4);
  let at = SIGNATURE.length + 8 + extension;
  const columns: (Buffer | null)[] = [];
  for (;;) {
    const fields = data.readInt16BE(at);
    at += 2;
    if (fields === -1) return columns;
    for (let field = 0; field < fields; field++) {
      const length = data.readInt32BE(at);
      at += 4;
      const value = length === -1 ? null : data.subarray(at, at + length);
      if (length > 0) at += length;
      if (field === 0) columns.push(value);
    }
  }
}
