import type http from "node:http";
import { json, send } from "./http-client.ts";

export const FORMS = "/api/v1/forms";

export interface ListItem {
  id: string;
  name: string;
  isClosed: boolean;
  submissions: number;
  organizationId: string;
  createdAt: string;
  updatedAt: string;
}

interface ListPage {
  data: ListItem[];
  meta: { total: number };
  pagination: { totalPages: number; currentPage: number; nextPage: number | null };
}

/**
 * Every form of the key's organization, page by page (100 a page) until `nextPage` is null.
 * Throws on any answer but 200, on a `meta.total` that changes between pages, and on a form
 * listed twice.
 */
export async function listAllForms(baseUrl: string, agent: http.Agent, key: string) {
  const items: ListItem[] = [];
  const seen = new Set<string>();
  let total: number | null = null;
  for (let page = 1; ; page++) {
    const reply = await send(baseUrl, agent, {
      path: `${FORMS}?pageSize=100&page=${page}`,
      key,
      timeoutMs: 30_000,
    });
    if (reply.status !== 200) {
      throw new Error(`listing page ${page} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    }
    const body = json<ListPage>(reply);
    if (total !== null && body.meta.total !== total) {
      throw new Error(`meta.total changed from ${total} to ${body.meta.total} while paging`);
    }
    total = body.meta.total;
    for (const item of body.data) {
      if (seen.has(item.id)) throw new Error(`form ${item.id} is listed twice`);
      seen.add(item.id);
      items.push(item);
    }
    if (body.pagination.nextPage === null) return { items, total, pages: page };
    if (body.pagination.nextPage !== page + 1) {
      throw new Error(`page ${page} gives nextPage ${body.pagination.nextPage}`);
    }
  }
}

/** Whether `text` is exactly the spec's error body, `{error: {code, message}}`, with `code`. */
export function isErrorBody(text: string, codes: readonly string[]): boolean {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    return (
      Object.keys(body).length === 1 &&
      typeof body.error === "object" &&
      body.error !== null &&
      Object.keys(body.error).length === 2 &&
      typeof body.error.message === "string" &&
      codes.includes(String(body.error.code))
    );
  } catch {
    return false;
  }
}
