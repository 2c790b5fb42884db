import { Type } from "typebox";

/** Where a page of a list stands: every list (forms, submissions, webhooks, deliveries) has it. */
export const Pagination = Type.Object({
  totalPages: Type.Integer(),
  currentPage: Type.Integer(),
  nextPage: Type.Union([Type.Integer(), Type.Null()]),
  previousPage: Type.Union([Type.Integer(), Type.Null()]),
});

/** The pagination of page `page` of `total` items, `pageSize` a page. */
export function paginationOf(total: number, page: number, pageSize: number) {
  const totalPages = Math.ceil(total / pageSize);
  return {
    totalPages,
    currentPage: page,
    nextPage: page < totalPages ? page + 1 : null,
    previousPage: page > 1 ? page - 1 : null,
  };
}
