/** Shared by the server prefetch and the client hook so both build the same infinite query. */
export const auditPagination = {
  getNextPageParam: (page: { nextCursor: string | null }) => page.nextCursor ?? undefined,
};
export const auditPageSize = 50;

/** Times in the audit views: UTC, to the second. */
export const auditDateFormat = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "medium",
  timeStyle: "medium",
  timeZone: "UTC",
});
