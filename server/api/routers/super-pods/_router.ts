import { createTRPCRouter, operatorProcedure } from "@/server/api/trpc";
import { getSuperPod, listSuperPods, watchSuperPods } from "@/server/nodes/super-pods";
import { superPodInput } from "./super-pods.schema";

/** The super cluster's pods (every tenant's synced pods and the cluster's own): operators only. */
export const superPodsRouter = createTRPCRouter({
  list: operatorProcedure.query(() => listSuperPods()),
  /** The list again after every pod change (SSE). */
  watch: operatorProcedure.subscription(({ signal }) => watchSuperPods(signal)),
  get: operatorProcedure.input(superPodInput).query(({ input }) => getSuperPod(input.namespace, input.name)),
});
