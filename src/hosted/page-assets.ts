import { readFileSync } from "node:fs";
import { FORM_SCRIPT_PATH } from "./form-page.ts";
import { ICON_PATH } from "./layout.ts";
import { stripTypesInThread } from "./strip-types-thread.ts";

/** Where the page's script imports the answer rules from (./answer-rules.js beside it). */
export const ANSWER_RULES_PATH = "/assets/answer-rules.js";

/**
 * A module of ours as the browser needs it: lines that hold only a comment or nothing (type
 * stripping leaves interfaces as blank lines) dropped, and indentation removed. Only whole lines
 * go, so no string or regular expression is touched; block comments are read as our sources write
 * them, opening at the start of a line. The page's weight budget (40 KB) needs the bytes.
 */
export function compactModule(source: string): string {
  const kept: string[] = [];
  let inBlockComment = false;
  for (const line of source.split("\n")) {
    const text = line.trim();
    if (inBlockComment) {
      inBlockComment = !text.includes("*/");
      continue;
    }
    if (text.startsWith("/*")) {
      inBlockComment = !text.includes("*/");
      continue;
    }
    if (text === "" || text.startsWith("//")) continue;
    kept.push(text);
  }
  return `${kept.join("\n")}\n`;
}

const read = (name: string) => readFileSync(new URL(name, import.meta.url), "utf8");

/** A body read at start, as the server always had it. */
const ready = (body: string) => () => Promise.resolve(body);

/** A body made on first use and kept; one that could not be made is made again next time. */
function once(make: () => Promise<string>): () => Promise<string> {
  let body: Promise<string> | undefined;
  return () => {
    body ??= make().catch((error: unknown) => {
      body = undefined;
      throw error;
    });
    return body;
  };
}

/**
 * What the pages load besides themselves, by path: the page's script, the answer rules it shares
 * with the intake (the very file the server runs, types stripped, on first request), and the icon.
 */
export const PAGE_ASSETS: Record<string, { operationId: string; body: () => Promise<string> }> = {
  [FORM_SCRIPT_PATH]: {
    operationId: "hostedFormScript",
    body: ready(compactModule(read("./assets/form.js"))),
  },
  [ANSWER_RULES_PATH]: {
    operationId: "hostedFormRules",
    body: once(async () =>
      compactModule(await stripTypesInThread(read("../fields/answer-rules.ts"))),
    ),
  },
  [ICON_PATH]: { operationId: "pagesIcon", body: ready(read("./assets/icon.svg")) },
};
