import { z } from "zod";
import { createTRPCRouter, operatorProcedure } from "@/server/api/trpc";
import { tenantsOnNode } from "@/server/nodes/service";
import { syncerHealth, watchSyncerHealth } from "@/server/syncer/health";

/** Kubernetes node names are DNS subdomains. */
const nodeName = z
  .string({ error: "expected a node name" })
  .max(253, "expected at most 253 characters")
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "expected a node name (lowercase letters, digits, '-' and '.')");

/** The syncer as operators see it: its health per tenant, and whose synced pods run on a node. */
export const syncerRouter = createTRPCRouter({
  health: operatorProcedure.query(() => syncerHealth()),
  /** The health again whenever it changes (SSE; polled every 2 s). */
  watchHealth: operatorProcedure.subscription(({ signal }) => watchSyncerHealth(signal)),
  tenantsOnNode: operatorProcedure
    .input(z.object({ name: nodeName }))
    .query(({ input }) => tenantsOnNode(input.name)),
});
