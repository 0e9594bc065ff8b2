/** useLiveQuery writes each message under the query's own key, which must be the key the views read. */
import { QueryClient } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import superjson from "superjson";
import { expect, it } from "vitest";
import type { AppRouter } from "@/server/api/root";

it("uses the same cache key as queryKey(input), with and without input", () => {
  const queryClient = new QueryClient();
  const client = createTRPCClient<AppRouter>({
    links: [httpBatchLink({ url: "http://127.0.0.1:9/api/trpc", transformer: superjson })],
  });
  const trpc = createTRPCOptionsProxy<AppRouter>({ client, queryClient });
  expect(trpc.nodes.list.queryOptions().queryKey).toEqual(trpc.nodes.list.queryKey());
  expect(trpc.workloads.pods.list.queryOptions({ tenant: "acme" }).queryKey).toEqual(
    trpc.workloads.pods.list.queryKey({ tenant: "acme" }),
  );
});
