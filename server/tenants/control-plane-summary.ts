/**
 * The portal's control plane card: a tenant-scoped summary of its Tenant object. It names the
 * gateway URL users connect kubectl to, never the control plane's own endpoint or access, and
 * nothing of any other tenant.
 */
import { env } from "@/server/env";
import { DomainError } from "@/server/errors";
import { K8sError } from "@/server/k8s/errors";
import { liveView, requireSuperCluster } from "@/server/k8s/live";
import { getGatewayEndpoint } from "@/server/kubeconfigs/gateway-endpoint";
import { tenantGatewayUrl } from "@/server/kubeconfigs/render";
import { conditionOf } from "@/server/tenants/status";
import { getTenant, type TenantResource, tenantInformer } from "@/server/tenants/tenant-resources";

export type ControlPlaneSummary =
  /** No Tenant object: the tenant's users can sign in, but no control plane exists. */
  | { tenant: string; state: "absent" }
  /** Ring0 cannot read Tenant objects right now (super cluster unreachable). */
  | { tenant: string; state: "unknown"; message: string }
  | {
      tenant: string;
      state: "present";
      phase: string;
      ready: "True" | "False" | "Unknown";
      /** The Ready condition's message (why it is not ready, or that it serves). */
      message: string | null;
      version: string | null;
      suspended: boolean;
      /** Where kubectl connects: the kube gateway's URL for this tenant. */
      gatewayUrl: string;
      /** When Ready last became True; null while not ready. */
      readySince: string | null;
    };

function gatewayUrlFor(tenant: string): string {
  return tenantGatewayUrl(getGatewayEndpoint()?.gatewayUrl ?? env().gatewayUrl, tenant);
}

export function summariseControlPlane(
  tenant: string,
  resource: TenantResource | undefined,
): ControlPlaneSummary {
  if (!resource) return { tenant, state: "absent" };
  const ready = conditionOf(resource.status, "Ready");
  const readyStatus = ready?.status === "True" || ready?.status === "False" ? ready.status : "Unknown";
  const deleting = Boolean(resource.metadata.deletionTimestamp);
  return {
    tenant,
    state: "present",
    phase: deleting ? "Deleting" : resource.status?.phase || "Pending",
    ready: readyStatus,
    message: ready?.message || null,
    version: resource.status?.version || resource.spec?.controlPlane?.version || null,
    suspended: resource.spec?.suspend ?? false,
    gatewayUrl: gatewayUrlFor(tenant),
    readySince: readyStatus === "True" ? (ready?.lastTransitionTime ?? null) : null,
  };
}

function unknown(tenant: string, error: unknown): ControlPlaneSummary {
  if (error instanceof DomainError || error instanceof K8sError)
    return { tenant, state: "unknown", message: error.message };
  throw error;
}

const findTenant = (resources: TenantResource[], tenant: string) =>
  resources.find((resource) => resource.metadata.name === tenant);

export async function controlPlaneSummary(tenant: string): Promise<ControlPlaneSummary> {
  try {
    return summariseControlPlane(tenant, await getTenant(tenant, "tenant status"));
  } catch (error) {
    return unknown(tenant, error);
  }
}

/** The summary once synced and again whenever it changes (other tenants' changes are skipped). */
export async function* watchControlPlaneSummary(
  tenant: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<ControlPlaneSummary> {
  let informer: ReturnType<typeof tenantInformer>;
  try {
    informer = tenantInformer(requireSuperCluster());
  } catch (error) {
    yield unknown(tenant, error);
    return;
  }
  let last = "";
  try {
    for await (const summary of liveView(
      [informer],
      "tenant status",
      () => summariseControlPlane(tenant, findTenant(informer.snapshot(), tenant)),
      signal,
    )) {
      const key = JSON.stringify(summary);
      if (key === last) continue;
      last = key;
      yield summary;
    }
  } catch (error) {
    yield unknown(tenant, error);
  }
}
