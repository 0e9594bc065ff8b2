/**
 * The runtime and storage classes a tenant may name, in its own control plane. Its API server
 * refuses a pod whose `runtimeClassName` names a RuntimeClass it does not have, so each runtime
 * class the operator allows (the isolation policy's `runtimeClasses`) that exists in the super
 * cluster is copied up by name and handler (its scheduling and overhead are the super cluster's
 * business). Each storage class the operator offers (`storageClasses`) goes up by name, provisioner,
 * reclaim policy and binding mode, the first one as the tenant's default class, so a claim that
 * names none gets it in the tenant as below. Both are labelled as Ring0's. What a tenant's pods and
 * claims name is still held to the allowed lists below (the filter, claims.ts), whatever the tenant
 * writes into its own copies. Done when a session first syncs, and again every 30 s until every
 * allowed class was found below (a sandbox or storage installed later still reaches the tenants).
 */
import { type KubeObject, serverSideApply } from "@/server/k8s/apply";
import { syncLabels } from "./contracts";
import { readOrNull, type SyncContext, type TenantSession } from "./session";

/** The annotation that makes a StorageClass the default one (the DefaultStorageClass admission reads it). */
const DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class";

type StorageClass = KubeObject & {
  provisioner?: string;
  reclaimPolicy?: string;
  volumeBindingMode?: string;
  allowVolumeExpansion?: boolean;
};

export async function ensureTenantClasses(ctx: SyncContext, session: TenantSession): Promise<void> {
  const labels = { [syncLabels.managed]: "true" };
  /** Copies class `name` of `apiVersion`/`kind` up as `copy` makes it from the one below; false when there is none below. */
  const copyUp = async <T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    copy: (below: T) => Record<string, unknown> | null,
  ): Promise<boolean> => {
    const below = await readOrNull<T>(ctx.superCluster, { apiVersion, kind, metadata: { name } });
    const fields = below ? copy(below) : null;
    if (!fields) return false;
    await serverSideApply(
      session.conn,
      { apiVersion, kind, metadata: { name, labels }, ...fields } as KubeObject,
      {
        force: true,
      },
    );
    return true;
  };
  let all = true;
  for (const name of session.isolation.runtimeClasses) {
    const copied = await copyUp<KubeObject & { handler?: string }>(
      "node.k8s.io/v1",
      "RuntimeClass",
      name,
      (below) => (below.handler ? { handler: below.handler } : null),
    );
    all &&= copied;
  }
  for (const [index, name] of session.isolation.storageClasses.entries()) {
    const copied = await copyUp<StorageClass>("storage.k8s.io/v1", "StorageClass", name, (below) =>
      below.provisioner
        ? {
            metadata: {
              name,
              labels,
              annotations: { [DEFAULT_CLASS_ANNOTATION]: index === 0 ? "true" : "false" },
            },
            provisioner: below.provisioner,
            reclaimPolicy: below.reclaimPolicy ?? "Delete",
            volumeBindingMode: below.volumeBindingMode ?? "Immediate",
            allowVolumeExpansion: below.allowVolumeExpansion ?? false,
          }
        : null,
    );
    all &&= copied;
  }
  session.classesCopied = all;
}
