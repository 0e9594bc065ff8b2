/** The sharing views render from query data alone (server-side, as the first paint is), with their test ids. */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import { AppRouterContext } from "next/dist/shared/lib/app-router-context.shared-runtime";
import { renderToString } from "react-dom/server";
import superjson from "superjson";
import { expect, it } from "vitest";
import { TRPCProvider } from "@/components/trpc/client";
import type { AppRouter } from "@/server/api/root";
import { defaultSharingPolicy, floorApiGroups } from "@/server/sharing/policy";
import { GrantDetail } from "./grant-detail";
import { GrantForm } from "./grant-form";
import { OperatorGrants } from "./operator-grants";
import { OwnerGrants } from "./owner-grants";
import { SharingPolicy } from "./sharing-policy";

const grant = {
  name: "acme.debug",
  shortName: "debug",
  owner: "acme",
  ownerDisplayName: "Acme Corp",
  grantees: [{ tenant: "globex" }],
  rules: [
    { namespaces: ["shared"], apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list"] },
  ],
  expiresAt: "2026-12-01T00:00:00.000Z",
  purpose: "debug",
  state: "PendingApproval" as const,
  message: "Waiting",
  conditions: [{ type: "Ready", status: "False", reason: "X", message: "m", lastTransitionTime: null }],
  lastUsedAt: null,
  requestedBy: "Alice",
  approvedBy: null,
  approvedAt: null,
  revokedBy: null,
  revokedAt: null,
  createdAt: "2026-11-01T00:00:00.000Z",
  resourceVersion: "1",
};

it("renders the owner, grant, form, operator and policy views with their test ids", () => {
  const queryClient = new QueryClient();
  const client = createTRPCClient<AppRouter>({
    links: [httpBatchLink({ url: "http://127.0.0.1:9/api/trpc", transformer: superjson })],
  });
  const trpc = createTRPCOptionsProxy<AppRouter>({ client, queryClient });
  queryClient.setQueryData(trpc.sharing.list.queryKey({ tenant: "acme" }), {
    grants: [grant],
    canChange: true,
  });
  queryClient.setQueryData(trpc.sharing.get.queryKey({ tenant: "acme", name: "debug" }), {
    grant,
    canChange: true,
  });
  queryClient.setQueryData(trpc.sharing.operator.list.queryKey({}), [grant]);
  queryClient.setQueryData(trpc.sharing.policy.queryKey(), {
    ...defaultSharingPolicy,
    floorApiGroups,
    canGrant: true,
    canReceive: true,
  });
  const noop = () => {};
  const router = {
    back: noop,
    forward: noop,
    refresh: noop,
    push: noop,
    replace: noop,
    prefetch: noop,
    bfcacheId: "test",
  };
  const html = renderToString(
    <AppRouterContext.Provider value={router}>
      <QueryClientProvider client={queryClient}>
        <TRPCProvider trpcClient={client} queryClient={queryClient}>
          <OwnerGrants tenant="acme" />
          <OperatorGrants />
          <GrantDetail tenant="acme" name="debug" />
          <GrantForm tenant="acme" onDone={() => {}} />
          <GrantForm tenant="acme" initial={grant} onDone={() => {}} />
          <SharingPolicy />
        </TRPCProvider>
      </QueryClientProvider>
    </AppRouterContext.Provider>,
  );
  expect(html).toContain("grant-row-debug");
  expect(html).toContain("get, list pods, pods/log in shared");
  expect(html).toContain("grant-approve-debug");
  expect(html).toContain("grant-submit");
  expect(html).toContain("grant-delete-debug");
});

function renderPolicy(policy: {
  grantors: string[] | null;
  grantees: string[] | null;
  canGrant: boolean;
  canReceive: boolean;
}): string {
  const queryClient = new QueryClient();
  const client = createTRPCClient<AppRouter>({
    links: [httpBatchLink({ url: "http://127.0.0.1:9/api/trpc", transformer: superjson })],
  });
  const trpc = createTRPCOptionsProxy<AppRouter>({ client, queryClient });
  queryClient.setQueryData(trpc.sharing.policy.queryKey(), {
    ...defaultSharingPolicy,
    floorApiGroups,
    ...policy,
  });
  return renderToString(
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={client} queryClient={queryClient}>
        <SharingPolicy />
      </TRPCProvider>
    </QueryClientProvider>,
  );
}

it("shows operators the policy's tenant lists and everyone else only their own tenant's standing", () => {
  const operator = renderPolicy({
    grantors: ["acme", "initech"],
    grantees: ["globex"],
    canGrant: false,
    canReceive: false,
  });
  expect(operator).toContain("policy-grantors");
  expect(operator).toContain("acme, initech");
  expect(operator).toContain("globex");
  expect(operator).not.toContain("policy-can-grant");

  const owner = renderPolicy({ grantors: null, grantees: null, canGrant: true, canReceive: false });
  expect(owner).not.toContain("policy-grantors");
  expect(owner).not.toContain("policy-grantees");
  expect(owner).toMatch(/data-testid="policy-can-grant"[^>]*>Yes</);
  expect(owner).toMatch(/data-testid="policy-can-receive"[^>]*>No</);
});
