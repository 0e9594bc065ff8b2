"use client";

import {
  type QueryKey,
  type UseSuspenseQueryOptions,
  useQueryClient,
  useSuspenseQuery,
} from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";

type SubscriptionOptions<TData, TError> = Parameters<typeof useSubscription<TData, TError>>[0];

/**
 * A view kept live by its watch: the query's snapshot (prefetched on the server, read with suspense)
 * and a subscription whose every message replaces it in the cache. `subscription` gets the handler
 * to pass as `onData`. Returns the data and the feed (for its status).
 */
export function useLiveQuery<TData, TError, TKey extends QueryKey, TFeedError>(
  query: UseSuspenseQueryOptions<TData, TError, TData, TKey>,
  subscription: (onData: (next: TData) => void) => SubscriptionOptions<TData, TFeedError>,
) {
  const queryClient = useQueryClient();
  const { data } = useSuspenseQuery(query);
  const feed = useSubscription(subscription((next) => queryClient.setQueryData<TData>(query.queryKey, next)));
  return { data, feed };
}
