import { defaultShouldDehydrateQuery, MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";
import superjson from "superjson";

/** `onError` (browser only) reports failed queries and mutations, e.g. as toasts. */
export function makeQueryClient(onError?: (error: Error) => void) {
  return new QueryClient({
    ...(onError
      ? { queryCache: new QueryCache({ onError }), mutationCache: new MutationCache({ onError }) }
      : {}),
    defaultOptions: {
      queries: { staleTime: 30_000, retry: (count, error) => count < 2 && !isClientError(error) },
      dehydrate: {
        serializeData: superjson.serialize,
        // Stream pending server prefetches to the client instead of awaiting them.
        shouldDehydrateQuery: (query) =>
          defaultShouldDehydrateQuery(query) || query.state.status === "pending",
      },
      hydrate: { deserializeData: superjson.deserialize },
    },
  });
}

function isClientError(error: unknown): boolean {
  const code = (error as { data?: { httpStatus?: number } } | null)?.data?.httpStatus;
  return typeof code === "number" && code >= 400 && code < 500;
}
