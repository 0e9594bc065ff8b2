import { accountsRouter } from "@/server/api/routers/accounts/_router";
import { auditRouter } from "@/server/api/routers/audit/_router";
import { controlPlaneRouter } from "@/server/api/routers/control-plane/_router";
import { kubeconfigsRouter } from "@/server/api/routers/kubeconfigs/_router";
import { meRouter } from "@/server/api/routers/me/_router";
import { membersRouter } from "@/server/api/routers/members/_router";
import { nodesRouter } from "@/server/api/routers/nodes/_router";
import { quotasRouter } from "@/server/api/routers/quotas/_router";
import { sharedWithMeRouter } from "@/server/api/routers/shared-with-me/_router";
import { sharingRouter } from "@/server/api/routers/sharing/_router";
import { superPodsRouter } from "@/server/api/routers/super-pods/_router";
import { syncerRouter } from "@/server/api/routers/syncer/_router";
import { tenantsRouter } from "@/server/api/routers/tenants/_router";
import { tokensRouter } from "@/server/api/routers/tokens/_router";
import { workloadsRouter } from "@/server/api/routers/workloads/_router";
import { createCallerFactory, createTRPCRouter } from "@/server/api/trpc";

export const appRouter = createTRPCRouter({
  me: meRouter,
  audit: auditRouter,
  tenants: tenantsRouter,
  nodes: nodesRouter,
  tokens: tokensRouter,
  kubeconfigs: kubeconfigsRouter,
  controlPlane: controlPlaneRouter,
  members: membersRouter,
  accounts: accountsRouter,
  workloads: workloadsRouter,
  syncer: syncerRouter,
  quotas: quotasRouter,
  superPods: superPodsRouter,
  sharing: sharingRouter,
  sharedWithMe: sharedWithMeRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
