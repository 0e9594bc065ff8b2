/**
 * Writes to a tenant's pods that its kubelet would make, had it one: the pod's status, its binding
 * to the node the super scheduler chose, and the end of a graceful deletion once the copy is gone.
 * A pod already gone (or already bound) is not an error.
 */
import { isConflict, isNotFound } from "@/server/k8s/errors";
import { PodKind } from "@/server/k8s/kinds/pod";
import { kubeRequest } from "@/server/k8s/transport";
import { boundNodeAnnotation, type Obj, type TenantSession } from "./session";
import type { Json } from "./synced-kinds";

function podPath(namespace: string, name: string, subresource?: string): string {
  return PodKind.path({ namespace, name, subresource });
}

/** Finish the tenant's graceful deletion (grace 0, only this very pod). */
export async function deleteTenantPod(session: TenantSession, pod: Obj): Promise<void> {
  try {
    await kubeRequest(session.conn, {
      method: "DELETE",
      path: podPath(pod.metadata.namespace ?? "", pod.metadata.name),
      body: {
        apiVersion: "v1",
        kind: "DeleteOptions",
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata.uid },
      },
      timeoutMs: 15_000,
    });
  } catch (error) {
    if (!isNotFound(error) && !isConflict(error)) throw error;
  }
}

/** Patch the pod's status subresource (a JSON merge patch, or a strategic one to merge conditions). */
export async function patchPodStatus(
  session: TenantSession,
  namespace: string,
  name: string,
  status: Json,
  strategic = false,
): Promise<void> {
  try {
    await kubeRequest(session.conn, {
      method: "PATCH",
      path: podPath(namespace, name, "status"),
      contentType: strategic ? "application/strategic-merge-patch+json" : "application/merge-patch+json",
      body: { status },
      timeoutMs: 15_000,
    });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/** Bind the pod to `node`, annotated so the syncer later tells its own binding from a tenant-pinned node. */
export async function bindPod(
  session: TenantSession,
  namespace: string,
  name: string,
  node: string,
): Promise<void> {
  try {
    await kubeRequest(session.conn, {
      method: "POST",
      path: podPath(namespace, name, "binding"),
      body: {
        apiVersion: "v1",
        kind: "Binding",
        metadata: { name, namespace, annotations: { [boundNodeAnnotation]: node } },
        target: { apiVersion: "v1", kind: "Node", name: node },
      },
      timeoutMs: 15_000,
    });
  } catch (error) {
    // Already bound (a retry after a lost answer) or gone: nothing to do.
    if (!isConflict(error) && !isNotFound(error)) throw error;
  }
}
