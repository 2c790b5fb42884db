import { FORMS_PATH } from "./load-spec.ts";
import { RARE_WORD } from "./seed-forms.ts";

/** Page size of every list scenario: the API's default. */
export const PAGE_SIZE = 20;

/**
 * The deep page: the last page where it is at most the 5,000th (100 forms: page 5, 10,000 forms:
 * page 500); page 5,000 (offset 99,980) for larger organizations. A client paging through a
 * million forms one page at a time is not a real workload; one jumping 5,000 pages in is.
 */
export const deepPage = (forms: number) => Math.min(Math.ceil(forms / PAGE_SIZE), 5_000);

export const SCENARIOS = {
  listDefaults: "list defaults",
  /** The same request, each sent with the next of 1,000 keys of the organization. */
  listManyKeys: "list defaults, 1,000 keys",
  listType: "list type=hosted",
  listSort: "list sort=submissions",
  listSearch: `list search=${RARE_WORD}`,
  listDeepPage: "list deep page",
  listSearchOneClient: `list search=${RARE_WORD}, one client`,
  getById: "get by id",
  create: "create",
  createIdempotent: "create with Idempotency-Key",
  update: "update",
  updateClose: "update isClosed",
  updateAutoClose: "update auto-close",
  updateOneForm: "update one form",
} as const;

/** Keys of the organization that the many-keys run sends in turn. */
export const MANY_KEYS = 1_000;

/** The list requests measured at every organization size, on formdeck and the minimal handler. */
export const LIST_SCENARIOS: readonly { name: string; query: (forms: number) => string }[] = [
  { name: SCENARIOS.listDefaults, query: () => "" },
  { name: SCENARIOS.listType, query: () => "?type=hosted" },
  { name: SCENARIOS.listSort, query: () => "?sort=submissions" },
  { name: SCENARIOS.listSearch, query: () => `?search=${RARE_WORD}` },
  { name: SCENARIOS.listDeepPage, query: (forms) => `?page=${deepPage(forms)}` },
];

export const listPath = (query: string) => `${FORMS_PATH}${query}`;
