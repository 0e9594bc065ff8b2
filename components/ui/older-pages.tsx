"use client";

/** The "Load older …" button under a paged table: an infinite query's next page, while there is one. */
export function OlderPages({
  query,
  noun,
}: {
  query: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };
  noun: string;
}) {
  if (!query.hasNextPage) return null;
  return (
    <p>
      <button
        type="button"
        className="button"
        onClick={() => query.fetchNextPage()}
        disabled={query.isFetchingNextPage}
      >
        {query.isFetchingNextPage ? "Loading…" : `Load older ${noun}`}
      </button>
    </p>
  );
}
