import { z } from "zod";
import { createTRPCRouter, operatorProcedure } from "@/server/api/trpc";
import { getNode, listNodes, superClusterOverview, watchNodes } from "@/server/nodes/service";
import { nodeUsage } from "@/server/nodes/usage";

/** Kubernetes node names are DNS subdomains. */
const nodeName = z
  .string()
  .max(253, "expected at most 253 characters")
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "expected a node name (lowercase letters, digits, '-' and '.')");

/** The super cluster's nodes: operators only. */
export const nodesRouter = createTRPCRouter({
  list: operatorProcedure.query(() => listNodes()),
  get: operatorProcedure.input(z.object({ name: nodeName })).query(({ input }) => getNode(input.name)),
  /** Real CPU and memory in use on the node and by each of its pods (its kubelet's metrics). */
  usage: operatorProcedure
    .input(z.object({ name: nodeName }))
    .query(async ({ input }) => (await nodeUsage(input.name)) ?? null),
  /** The node list, again after every change (SSE). */
  watch: operatorProcedure.subscription(({ signal }) => watchNodes(signal)),
  overview: operatorProcedure.query(() => superClusterOverview()),
});
