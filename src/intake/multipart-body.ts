import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Busboy, type BusboyInstance } from "@fastify/busboy";
import { bodyGarbage } from "../files/body-garbage.ts";
import type { UploadTurn } from "../files/upload-pace.ts";
import { AppError, invalid } from "../http/errors.ts";
import {
  decodeUtf8,
  FieldCollector,
  MAX_FIELD_NAME_LENGTH,
  MAX_FIELDS,
  type SubmittedFields,
  tooMany,
} from "./intake-body.ts";

/**
 * A file part as it arrived: its field, the name sent (not yet cleaned), and where its bytes were
 * written as they came, with their count and SHA-256 (base64url).
 */
export interface ArrivedFile {
  field: string;
  sentName: string;
  path: string;
  size: number;
  digest: string;
}

export interface MultipartLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
  /** Bytes of everything that is not a file's content: fields, part headers, boundaries. */
  maxOtherBytes: number;
}

/** What the intake does with each file, one at a time, in the order they arrive. */
export interface FileHandlers<F> {
  /** Before the first file's bytes are read; throws to refuse the request. */
  beforeFirstFile(): void;
  /** A new file, private to the request, for the next part's bytes. */
  newFile(): Promise<string>;
  /** The file, written; what it resolves to is collected. */
  keep(file: ArrivedFile): Promise<F>;
}

/** A file part's stream, with what busboy writes on it. */
type FileStream = Readable & { truncated?: boolean; bytesRead?: number };

const malformed = () => invalid("body", "is not valid multipart/form-data");
export const bodyTooLarge = (limit: number) =>
  new AppError("payload_too_large", `body: must be at most ${limit} bytes`);
const fieldName = (name: string) => name.slice(0, MAX_FIELD_NAME_LENGTH);
const fileTooLarge = (field: string, limit: number) =>
  new AppError("payload_too_large", `${fieldName(field)}: a file may be at most ${limit} bytes`);

/**
 * Reads a multipart body from `source` as it arrives. Fields are collected; each file part is
 * written to a file of its own as it arrives (at most `maxFileBytes`), never held whole in memory,
 * and handed to `handlers.keep`; the next file is not read before that resolves, and the parser,
 * its next file unread, stops reading the body meanwhile, as it does while `turn` says to wait;
 * once the body is read, the next upload's turn comes.
 * The first refusal stops the reading (the caller drains or closes what is left).
 */
export function readMultipart<F>(
  source: Readable,
  contentType: string,
  limits: MultipartLimits,
  handlers: FileHandlers<F>,
  turn: UploadTurn,
): Promise<{ fields: SubmittedFields; files: F[] }> {
  return new Promise((resolve, reject) => {
    const collector = new FieldCollector();
    const kept: F[] = [];
    const fileParts: { field: string; stream: FileStream }[] = [];
    let fileChain: Promise<unknown> = Promise.resolve();
    let rawBytes = 0;
    let fileCount = 0;
    let settled = false;
    let parser: BusboyInstance;
    // The body is read while nothing holds it: the parser's backlog, or the pace.
    let holds = 0;
    const hold = () => {
      if (holds++ === 0) source.pause();
    };
    const release = () => {
      if (--holds === 0 && !settled) source.resume();
    };

    // The parser counts each file's bytes as it parses them (`bytesRead`), a truncated one as
    // its limit; what it has parsed is what it was given less what it still holds.
    const checkSizes = () => {
      const over = fileParts.find((part) => part.stream.truncated);
      if (over) throw fileTooLarge(over.field, limits.maxFileBytes);
      const fileBytes = fileParts.reduce((sum, part) => sum + (part.stream.bytesRead ?? 0), 0);
      if (fileBytes > limits.maxTotalBytes) {
        throw new AppError(
          "payload_too_large",
          `${fieldName(fileParts.at(-1)?.field ?? "")}: files may total at most ${limits.maxTotalBytes} bytes`,
        );
      }
      if (rawBytes - parser.writableLength - fileBytes > limits.maxOtherBytes) {
        throw bodyTooLarge(limits.maxOtherBytes);
      }
    };
    // Written by hand rather than piped: the sizes are checked once the parser has the chunk.
    const write = (chunk: Buffer) => {
      rawBytes += chunk.length;
      bodyGarbage.read(chunk.length);
      const ready = parser.write(chunk);
      try {
        checkSizes();
      } catch (error) {
        fail(error);
        return;
      }
      if (!ready) {
        hold();
        parser.once("drain", release);
      }
      if (turn.waitAfter(chunk.length, release)) hold();
    };
    const ended = () => {
      turn.bodyRead();
      parser.end();
    };
    // The client went away mid-body: nothing of it is kept.
    const closed = () => {
      if (!(source as Readable & { complete?: boolean }).complete) {
        fail(new AppError("bad_request", "body: ended before it was complete"));
      }
    };
    const detach = () => {
      turn.bodyRead();
      source.off("data", write);
      source.off("end", ended);
      source.off("close", closed);
    };
    function fail(error: unknown) {
      if (settled) return;
      settled = true;
      detach();
      // A part still being written would wait forever for the rest of the body, its file left
      // open: ending it closes the file.
      for (const part of fileParts) part.stream.destroy();
      reject(error);
    }

    try {
      parser = Busboy({
        headers: { "content-type": contentType },
        // Values arrive as their bytes; decodeUtf8 refuses those that are not UTF-8.
        defCharset: "latin1",
        limits: {
          fields: MAX_FIELDS,
          parts: MAX_FIELDS + limits.maxFiles + 1,
          fieldSize: limits.maxOtherBytes,
          fileSize: limits.maxFileBytes,
          headerPairs: 20,
        },
      });
    } catch {
      // No boundary, or one busboy cannot use.
      reject(malformed());
      return;
    }

    // Part names are decoded by the parser, which writes U+FFFD for bytes that are not UTF-8:
    // the body is refused as the whole-body check of the other types refuses it.
    const requireUtf8Name = (name: string) => {
      if (name.includes("\uFFFD")) throw invalid("body", "is not valid UTF-8");
    };

    const countFile = (field: string) => {
      if (fileCount === 0) handlers.beforeFirstFile();
      if (++fileCount > limits.maxFiles) {
        throw new AppError(
          "payload_too_large",
          `${fieldName(field)}: at most ${limits.maxFiles} files may be sent with a submission`,
        );
      }
    };

    /**
     * One file part, written to its own file once the files before it are kept; null for no
     * file (a part without a name or content is an untouched file input).
     */
    const readFile = async (
      field: string,
      stream: FileStream,
      sentName: string,
    ): Promise<ArrivedFile | null> => {
      const path = await handlers.newFile();
      const hash = createHash("sha256");
      let size = 0;
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          try {
            // A part without a name is an untouched file input, unless it has content.
            if (size === 0 && sentName === "") countFile(field);
          } catch (error) {
            done(error as Error);
            return;
          }
          size += chunk.length;
          hash.update(chunk);
          done(null, chunk);
        },
      });
      try {
        await pipeline(stream, counted, createWriteStream(path, { mode: 0o600 }));
      } catch (error) {
        if (error instanceof AppError) throw error;
        if (stream.errored) throw malformed();
        throw error;
      }
      if (stream.truncated) throw fileTooLarge(field, limits.maxFileBytes);
      if (size === 0 && sentName === "") return null;
      return { field, sentName, path, size, digest: hash.digest("base64url") };
    };

    parser.on("field", (name, value, _nameTruncated, valueTruncated) => {
      if (settled) return;
      try {
        requireUtf8Name(name);
        if (valueTruncated) throw bodyTooLarge(limits.maxOtherBytes);
        collector.add(name, decodeUtf8(Buffer.from(value, "latin1")));
      } catch (error) {
        fail(error);
      }
    });
    parser.on("file", (field, stream: FileStream, sentName) => {
      fileParts.push({ field, stream });
      try {
        requireUtf8Name(field);
        if (sentName !== "") countFile(field);
      } catch (error) {
        fail(error);
      }
      fileChain = fileChain.then(async () => {
        if (settled) {
          stream.resume();
          return;
        }
        try {
          const arrived = await readFile(field, stream, sentName);
          if (arrived && !settled) kept.push(await handlers.keep(arrived));
        } catch (error) {
          stream.resume();
          fail(error);
        }
      });
    });
    parser.on("fieldsLimit", () => fail(tooMany()));
    parser.on("partsLimit", () => fail(tooMany()));
    parser.on("error", () => fail(malformed()));
    parser.on("finish", async () => {
      await fileChain;
      if (settled) return;
      try {
        checkSizes();
      } catch (error) {
        fail(error);
        return;
      }
      settled = true;
      detach();
      resolve({ fields: collector.fields(), files: kept });
    });

    source.on("data", write);
    source.on("end", ended);
    source.on("close", closed);
  });
}
