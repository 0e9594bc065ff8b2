/**
 * Tenant custom resources (tenants.ring0.dev, cluster-scoped) as the operator console sees them:
 * the model, a live list from a shared informer, and create, delete and spec edits through the
 * super cluster. One tenant's page (status in detail and Events) is tenant-detail.ts.
 */

import { ConflictError, InvalidInputError, NotFoundError } from "@/server/errors";
import {
  deleteObject,
  FIELD_MANAGER,
  type KubeObject,
  readObject,
  serverSideApply,
} from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isConflict, isNotFound } from "@/server/k8s/errors";
import type { SharedInformer } from "@/server/k8s/informers";
import { defineKind } from "@/server/k8s/kinds/kind";
import { liveView, readSynced, requireSuperCluster } from "@/server/k8s/live";
import { kubeRequest } from "@/server/k8s/transport";
import { availableVersions, resolveVersion } from "@/server/provisioners/versions";
import type { TenantStatus } from "./status";

export const tenantApiVersion = "ring0.dev/v1alpha1";
export const tenantKind = "Tenant";
/** The Tenant kind (cluster-scoped, in the super cluster): its paths and shared informer. */
export const TenantKind = defineKind<TenantResource>({
  apiVersion: tenantApiVersion,
  kind: tenantKind,
  plural: "tenants",
  namespaced: false,
});
export const tenantsPath = TenantKind.path();

export type Provisioner = "local" | "kubernetes";

export interface TenantCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** `spec.quota`: the hard limits enforced, and the template they were copied from (if any). */
export interface TenantQuotaSpec {
  hard?: Record<string, string>;
  template?: string;
}

/** A Tenant object as stored (only the fields Ring0 reads are typed). */
export interface TenantResource extends KubeObject {
  spec: {
    displayName?: string;
    controlPlane?: {
      provisioner?: Provisioner;
      version?: string;
      /** etcd's volume claim of a control plane in pods. */
      storage?: { size?: string; storageClassName?: string };
    };
    suspend?: boolean;
    quota?: TenantQuotaSpec;
    /**
     * podSecurity: the Pod Security level its pods are held to (absent: the isolation policy's
     * default); runtimeClass: the runtime class of its pods that name none (absent: the policy's).
     */
    syncer?: { weight?: number; podSecurity?: "baseline" | "restricted"; runtimeClass?: string };
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
  /** The Ready condition's message (why a Failed tenant failed), if any. */
  readyMessage: string | null;
  /** The version the control plane reports serving (status.version, a gitVersion), if any. */
  runningVersion: string | null;
  createdAt: string | null;
  readyAt: string | null;
}

export interface CreateTenantInput {
  name: string;
  displayName: string;
  provisioner: Provisioner;
  version: string;
  admins: string[];
  /** The quota it starts with (the default quota template's, when there is one). */
  quota?: TenantQuotaSpec;
}

/** An ISO timestamp, or null for a missing or unparseable one. */
export function isoOrNull(value: string | Date | undefined): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

export function summariseTenant(tenant: TenantResource): TenantSummary {
  const readyCondition = tenant.status?.conditions?.find((condition) => condition.type === "Ready");
  const ready = readyCondition?.status;
  return {
    name: tenant.metadata.name,
    displayName: tenant.spec?.displayName ?? tenant.metadata.name,
    provisioner: tenant.spec?.controlPlane?.provisioner ?? "local",
    version: tenant.spec?.controlPlane?.version ?? "",
    suspended: tenant.spec?.suspend ?? false,
    phase: tenant.status?.phase || "Pending",
    ready: ready === "True" || ready === "False" ? ready : "Unknown",
    readyMessage: readyCondition?.message || null,
    runningVersion: tenant.status?.version || null,
    createdAt: isoOrNull(tenant.metadata.creationTimestamp),
    readyAt: isoOrNull(tenant.status?.timings?.readyAt),
  };
}

function summariseAll(tenants: TenantResource[]): TenantSummary[] {
  return tenants.map(summariseTenant).sort((a, b) => a.name.localeCompare(b.name));
}

/** One Tenant watch per super cluster, however many views are open. */
export function tenantInformer(cluster: ClusterConnection): SharedInformer<TenantResource> {
  return TenantKind.informer(cluster);
}

/** Every Tenant in the super cluster, from the shared informer once it has synced. */
export function listTenants(): Promise<TenantResource[]> {
  const informer = tenantInformer(requireSuperCluster());
  return readSynced([informer], "tenant list", () => informer.snapshot());
}

/** One Tenant from the shared informer once it has synced; undefined when there is none. */
export function getTenant(name: string, what = "tenant"): Promise<TenantResource | undefined> {
  const informer = tenantInformer(requireSuperCluster());
  return readSynced([informer], what, () =>
    informer.snapshot().find((candidate) => candidate.metadata.name === name),
  );
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
      ...(input.quota ? { quota: input.quota } : {}),
    },
  });
  return summariseTenant(applied);
}

/** Deletes a Tenant; resolves whether this call deleted it (false: it was already gone). */
export function deleteTenantResource(name: string): Promise<boolean> {
  return deleteObject(requireSuperCluster(), tenantRef(name));
}

/** The NotFoundError for a Tenant the super cluster does not have. */
export function tenantNotFound(name: string): NotFoundError {
  return new NotFoundError(`Tenant "${name}" was not found in the super cluster.`);
}

/**
 * A JSON merge patch of a Tenant's spec. Apply as "ring0" would drop the fields Ring0 applied at
 * creation but leaves out here (display name, admins), so spec edits are merge patches.
 */
async function patchTenantSpec(name: string, spec: TenantResource["spec"]): Promise<TenantResource> {
  try {
    return await kubeRequest<TenantResource>(requireSuperCluster(), {
      method: "PATCH",
      path: TenantKind.path({ name }),
      query: { fieldManager: FIELD_MANAGER },
      contentType: "application/merge-patch+json",
      body: { spec },
      timeoutMs: 15_000,
    });
  } catch (error) {
    if (isNotFound(error)) throw tenantNotFound(name);
    throw error;
  }
}

/** Suspends (stops the control plane, data kept) or resumes a tenant; resolves the previous setting. */
export async function setTenantSuspended(
  name: string,
  suspend: boolean,
): Promise<{ tenant: TenantSummary; wasSuspended: boolean }> {
  const current = await readTenant(name);
  const patched = await patchTenantSpec(name, { suspend });
  return { tenant: summariseTenant(patched), wasSuspended: current.spec?.suspend === true };
}

/** The Kubernetes versions a tenant can be moved to (those Ring0 has binaries for), newest first. */
export function tenantVersions(): string[] {
  return availableVersions();
}

/**
 * Moves a tenant's control plane to `version` (an available version or its minor). Unknown
 * versions are refused before anything is written, naming the available ones.
 */
export async function setTenantVersion(
  name: string,
  version: string,
): Promise<{ tenant: TenantSummary; from: string }> {
  const available = tenantVersions();
  const wanted = version.trim().replace(/^v/, "");
  try {
    resolveVersion(wanted, available);
  } catch {
    throw new InvalidInputError(
      `Kubernetes ${version} is not available: Ring0 can run ${available.join(", ")}. Choose one of them.`,
    );
  }
  const current = await readTenant(name);
  const patched = await patchTenantSpec(name, {
    controlPlane: { ...current.spec?.controlPlane, version: wanted },
  });
  return { tenant: summariseTenant(patched), from: current.spec?.controlPlane?.version ?? "" };
}

/**
 * Replaces a Tenant's spec.quota (null removes it) with a JSON merge patch that names every key it
 * drops, and only if the Tenant is still at `current`'s resourceVersion: a quota changed meanwhile
 * is a ConflictError rather than silently overwritten.
 */
export async function replaceTenantQuota(
  current: TenantResource,
  quota: TenantQuotaSpec | null,
): Promise<TenantResource> {
  const name = current.metadata.name;
  let patch: Record<string, unknown> | null = null;
  if (quota) {
    const hard: Record<string, string | null> = {};
    for (const key of Object.keys(current.spec?.quota?.hard ?? {})) hard[key] = null;
    Object.assign(hard, quota.hard ?? {});
    patch = { hard, template: quota.template ?? null };
  }
  try {
    return await kubeRequest<TenantResource>(requireSuperCluster(), {
      method: "PATCH",
      path: TenantKind.path({ name }),
      query: { fieldManager: FIELD_MANAGER },
      contentType: "application/merge-patch+json",
      body: { metadata: { resourceVersion: current.metadata.resourceVersion }, spec: { quota: patch } },
      timeoutMs: 15_000,
    });
  } catch (error) {
    if (isNotFound(error)) throw tenantNotFound(name);
    if (isConflict(error)) {
      throw new ConflictError(
        `Tenant "${name}" changed while its quota was being set; read it again and retry.`,
      );
    }
    throw error;
  }
}

/** One Tenant read from the API server (not an informer); NotFoundError when there is none. */
export async function readTenant(name: string): Promise<TenantResource> {
  try {
    return await readObject<TenantResource>(requireSuperCluster(), tenantRef(name));
  } catch (error) {
    if (isNotFound(error)) throw tenantNotFound(name);
    throw error;
  }
}
