/**
 * Tenant custom resources (tenants.ring0.dev, cluster-scoped) as the operator console sees them:
 * the model, a live list from a shared informer, and create/delete through the super cluster.
 */
import { ConflictError } from "@/server/errors";
import { deleteObject, type KubeObject, readObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import { type SharedInformer, sharedInformer } from "@/server/k8s/informers";
import { liveView, readSynced, requireSuperCluster } from "@/server/k8s/live";
import type { TenantStatus } from "./status";

export const tenantApiVersion = "ring0.dev/v1alpha1";
export const tenantKind = "Tenant";
export const tenantsPath = "/apis/ring0.dev/v1alpha1/tenants";

export type Provisioner = "local" | "kubernetes";

export interface TenantCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** A Tenant object as stored (only the fields Ring0 reads are typed). */
export interface TenantResource extends KubeObject {
  spec: {
    displayName?: string;
    controlPlane?: { provisioner?: Provisioner; version?: string };
    suspend?: boolean;
    quota?: { hard?: Record<string, string> };
    syncer?: { weight?: number };
    admins?: string[];
  };
  status?: TenantStatus;
}

export interface TenantSummary {
  name: string;
  displayName: string;
  provisioner: Provisioner;
  version: string;
  suspended: boolean;
  /** status.phase, or "Pending" until the reconciler has written one. */
  phase: string;
  /** The Ready condition's status; "Unknown" when there is none yet. */
  ready: "True" | "False" | "Unknown";
  createdAt: string | null;
  readyAt: string | null;
}

export interface CreateTenantInput {
  name: string;
  displayName: string;
  provisioner: Provisioner;
  version: string;
  admins: string[];
}

function isoOrNull(value: string | Date | undefined): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

export function summariseTenant(tenant: TenantResource): TenantSummary {
  const ready = tenant.status?.conditions?.find((condition) => condition.type === "Ready")?.status;
  return {
    name: tenant.metadata.name,
    displayName: tenant.spec?.displayName ?? tenant.metadata.name,
    provisioner: tenant.spec?.controlPlane?.provisioner ?? "local",
    version: tenant.spec?.controlPlane?.version ?? "",
    suspended: tenant.spec?.suspend ?? false,
    phase: tenant.status?.phase || "Pending",
    ready: ready === "True" || ready === "False" ? ready : "Unknown",
    createdAt: isoOrNull(tenant.metadata.creationTimestamp),
    readyAt: isoOrNull(tenant.status?.timings?.readyAt),
  };
}

function summariseAll(tenants: TenantResource[]): TenantSummary[] {
  return tenants.map(summariseTenant).sort((a, b) => a.name.localeCompare(b.name));
}

/** One Tenant watch per super cluster, however many views are open. */
export function tenantInformer(cluster: ClusterConnection): SharedInformer<TenantResource> {
  return sharedInformer<TenantResource>(cluster, { path: tenantsPath });
}

export function listTenantResources(): Promise<TenantSummary[]> {
  const informer = tenantInformer(requireSuperCluster());
  return readSynced([informer], "tenant list", () => summariseAll(informer.snapshot()));
}

/** Live tenant list (SSE): the full list once synced and again after every change. */
export function watchTenantResources(signal: AbortSignal | undefined): AsyncGenerator<TenantSummary[]> {
  const informer = tenantInformer(requireSuperCluster());
  return liveView([informer], "tenant list", () => summariseAll(informer.snapshot()), signal);
}

export function tenantRef(name: string) {
  return { apiVersion: tenantApiVersion, kind: tenantKind, metadata: { name } };
}

/**
 * Creates a Tenant by server-side apply (field manager ring0). Apply would silently merge into an
 * existing tenant, so an existing name is refused first.
 */
export async function createTenantResource(
  input: CreateTenantInput,
  actor: { name: string },
): Promise<TenantSummary> {
  const cluster = requireSuperCluster();
  try {
    await readObject(cluster, tenantRef(input.name));
    throw new ConflictError(`A tenant named "${input.name}" already exists; choose another name.`);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  const applied = await serverSideApply<TenantResource>(cluster, {
    ...tenantRef(input.name),
    metadata: {
      name: input.name,
      labels: { "app.kubernetes.io/managed-by": "ring0" },
      annotations: { "ring0.dev/created-by": actor.name },
    },
    spec: {
      displayName: input.displayName,
      controlPlane: { provisioner: input.provisioner, version: input.version },
      admins: input.admins,
    },
  });
  return summariseTenant(applied);
}

/** Deletes a Tenant; resolves whether this call deleted it (false: it was already gone). */
export function deleteTenantResource(name: string): Promise<boolean> {
  return deleteObject(requireSuperCluster(), tenantRef(name));
}
