/**
 * The runtime classes a tenant may name, in its own control plane: its API server refuses a pod
 * whose `runtimeClassName` names a RuntimeClass it does not have, so each class the operator allows
 * (the isolation policy's `runtimeClasses`) that exists in the super cluster is copied up by name
 * and handler (its scheduling and overhead are the super cluster's business), labelled as Ring0's.
 * What a tenant's pod names is still held to the allowed list below (the filter), whatever the
 * tenant writes into its own copies. Done when a session first syncs, and again every 30 s until
 * every allowed class was found below (a sandbox installed later still reaches the tenants).
 */
import { type KubeObject, serverSideApply } from "@/server/k8s/apply";
import { syncLabels } from "./contracts";
import { readOrNull, type SyncContext, type TenantSession } from "./session";

export async function ensureTenantRuntimeClasses(ctx: SyncContext, session: TenantSession): Promise<void> {
  let all = true;
  for (const name of session.isolation.runtimeClasses) {
    const below = await readOrNull<KubeObject & { handler?: string }>(ctx.superCluster, {
      apiVersion: "node.k8s.io/v1",
      kind: "RuntimeClass",
      metadata: { name },
    });
    if (!below?.handler) {
      all = false;
      continue;
    }
    await serverSideApply(
      session.conn,
      {
        apiVersion: "node.k8s.io/v1",
        kind: "RuntimeClass",
        metadata: { name, labels: { [syncLabels.managed]: "true" } },
        handler: below.handler,
      } as KubeObject,
      { force: true },
    );
  }
  session.runtimeClassesCopied = all;
}
