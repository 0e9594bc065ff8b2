import "server-only";
import { dehydrate, HydrationBoundary } from "@tanstack/react-query";
import { createTRPCOptionsProxy, type TRPCQueryOptions } from "@trpc/tanstack-react-query";
import { headers } from "next/headers";
import { cache, type ReactNode } from "react";
import { makeQueryClient } from "@/components/trpc/query-client";
import { appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/trpc";

/** One QueryClient per server request, shared by every prefetch in that render. */
export const getQueryClient = cache(makeQueryClient);

const createRscContext = cache(async () => {
  const incoming = new Headers(await headers());
  incoming.set("x-trpc-source", "rsc");
  return createContext({ headers: incoming });
});

/** Server components prefetch through the same router, tiers and checks as the browser. */
export const trpc = createTRPCOptionsProxy({
  ctx: createRscContext,
  router: appRouter,
  queryClient: getQueryClient,
});

// biome-ignore lint/suspicious/noExplicitAny: mirrors tRPC's documented prefetch helper signature
export function prefetch<T extends ReturnType<TRPCQueryOptions<any>>>(queryOptions: T) {
  const queryClient = getQueryClient();
  // Infinite queries must be prefetched as such, or the client hydrates a page as if it were pages.
  if (queryOptions.queryKey[1]?.type === "infinite") {
    // biome-ignore lint/suspicious/noExplicitAny: infinite query options share the prefetch signature
    void queryClient.prefetchInfiniteQuery(queryOptions as any);
  } else {
    void queryClient.prefetchQuery(queryOptions);
  }
}

export function HydrateClient({ children }: { children: ReactNode }) {
  return <HydrationBoundary state={dehydrate(getQueryClient())}>{children}</HydrationBoundary>;
}
