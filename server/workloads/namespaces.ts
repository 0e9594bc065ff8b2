/**
 * The tenant's namespaces, read and changed as the signed-in user: every call goes to the tenant's
 * control plane with that user impersonated (server/k8s/control-plane-client.ts), so the control plane's
 * RBAC allows or refuses it exactly as it would the user's kubectl. Changes are audited.
 */
import type { AuditResult } from "@/server/audit/repository";
import { recordAudit } from "@/server/audit/service";
import type { SessionUser } from "@/server/core/roles";
import { controlPlaneClient } from "@/server/impersonation/as-user";
import { ControlPlaneNotServingError } from "@/server/k8s/control-plane-client";
import { K8sError } from "@/server/k8s/errors";
import { NamespaceKind } from "@/server/k8s/kinds/namespace";

export interface NamespaceRow {
  name: string;
  /** Active or Terminating. */
  phase: string;
  createdAt: string | null;
}

export type NamespaceList =
  | { state: "serving"; namespaces: NamespaceRow[] }
  /** No control plane, or one that is not serving: `phase` says which ("Absent" when none exists). */
  | { state: "not-serving"; phase: string; message: string };

interface NamespaceObject {
  metadata: { name: string; creationTimestamp?: string };
  status?: { phase?: string };
}

export interface ActingUser {
  user: SessionUser;
  tenant: string;
  requestId: string;
}

function row(namespace: NamespaceObject): NamespaceRow {
  return {
    name: namespace.metadata.name,
    phase: namespace.status?.phase ?? "Active",
    createdAt: namespace.metadata.creationTimestamp ?? null,
  };
}

export async function listNamespaces({ user, tenant }: ActingUser): Promise<NamespaceList> {
  try {
    const list = await controlPlaneClient().request<{ items?: NamespaceObject[] }>(tenant, user, {
      path: NamespaceKind.path(),
    });
    const namespaces = (list.items ?? []).map(row).sort((a, b) => a.name.localeCompare(b.name));
    return { state: "serving", namespaces };
  } catch (error) {
    // A control plane that is not up yet is a state of the page, not a failure of it.
    if (error instanceof ControlPlaneNotServingError)
      return { state: "not-serving", phase: error.phase, message: error.message };
    throw error;
  }
}

/** Runs a change and records it: denied when the control plane's RBAC refused it. */
async function audited<T>(
  acting: ActingUser,
  action: "namespace.create" | "namespace.delete",
  name: string,
  change: () => Promise<T>,
): Promise<T> {
  const record = (result: AuditResult, detail?: Record<string, unknown>) =>
    recordAudit({
      actorId: acting.user.id,
      actorName: acting.user.name,
      actorTenant: acting.user.tenant,
      tenant: acting.tenant,
      action,
      targetKind: "Namespace",
      target: name,
      result,
      requestId: acting.requestId,
      detail: detail ?? null,
    });
  try {
    const value = await change();
    await record("success");
    return value;
  } catch (error) {
    // Nothing was attempted when the control plane is not serving; that is not an event.
    if (error instanceof ControlPlaneNotServingError) throw error;
    if (error instanceof K8sError)
      await record(error.status === 403 ? "denied" : "failure", {
        status: error.status,
        reason: error.reason,
      });
    else await record("failure");
    throw error;
  }
}

export function createNamespace(acting: ActingUser, name: string): Promise<NamespaceRow> {
  return audited(acting, "namespace.create", name, async () =>
    row(
      await controlPlaneClient().request<NamespaceObject>(acting.tenant, acting.user, {
        method: "POST",
        path: NamespaceKind.path(),
        body: { apiVersion: "v1", kind: "Namespace", metadata: { name } },
      }),
    ),
  );
}

/** Starts the deletion; the namespace stays Terminating until everything in it is gone. */
export function deleteNamespace(acting: ActingUser, name: string): Promise<NamespaceRow> {
  return audited(acting, "namespace.delete", name, async () =>
    row(
      await controlPlaneClient().request<NamespaceObject>(acting.tenant, acting.user, {
        method: "DELETE",
        path: NamespaceKind.path({ name }),
      }),
    ),
  );
}
