/** Shared by the server prefetch and the client hook so both build the same infinite query. */
export const refusalPagination = {
  getNextPageParam: (page: { nextCursor: string | null }) => page.nextCursor ?? undefined,
};
export const refusalPageSize = 20;
