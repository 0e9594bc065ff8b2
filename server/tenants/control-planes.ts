/**
 * Where Ring0 finds a tenant's control plane at request time (the kube gateway, kubeconfig
 * downloads, the portal). The runtime installs one directory at start-up; it lives on globalThis
 * because the custom server and Next's route handlers are separate module graphs.
 */
import { processSlot } from "@/server/core/process-slots";
import type { ControlPlaneAccess, Provisioner } from "@/server/provisioners/types";
import type { TenantResource } from "./tenant-resources";

export type ControlPlaneLookup =
  /** Serving: Ring0 reaches it with `access` (admin identity; server-side only). */
  | { state: "ready"; access: ControlPlaneAccess; version?: string }
  /** The tenant exists but its control plane cannot serve now (provisioning, suspended, failed, deleting). */
  | { state: "unavailable"; phase: string; message: string }
  /** No such tenant. */
  | { state: "absent" };

export interface ControlPlaneDirectory {
  lookup(tenant: string): Promise<ControlPlaneLookup>;
}

const slot = processSlot<ControlPlaneDirectory | null>("tenants.controlPlaneDirectory");

export function setControlPlaneDirectory(directory: ControlPlaneDirectory | null): void {
  slot.set(directory);
}

export function getControlPlaneDirectory(): ControlPlaneDirectory | null {
  return slot.get() ?? null;
}

export interface DirectoryOptions {
  /** The Tenant objects (the shared informer's snapshot in production). */
  tenants: {
    find(tenant: string): Promise<{ resource: TenantResource | undefined } | { error: string }>;
  };
  provisioners: Partial<Record<string, Pick<Provisioner, "access">>>;
  defaultProvisioner: string;
  /** How long admin access read from a provisioner is reused. Default 10 s. */
  accessTtlMs?: number;
  now?: () => number;
}

/**
 * The directory over Tenant objects: a tenant serves when its ControlPlaneReady condition is True
 * and it is neither suspended nor being deleted. A tenant whose version change was refused keeps
 * serving at its current version.
 */
export function createControlPlaneDirectory(options: DirectoryOptions): ControlPlaneDirectory {
  const ttl = options.accessTtlMs ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { key: string; at: number; access: ControlPlaneAccess }>();
  return {
    async lookup(tenant) {
      const found = await options.tenants.find(tenant);
      if ("error" in found) return { state: "unavailable", phase: "Unknown", message: found.error };
      const resource = found.resource;
      if (!resource) {
        cache.delete(tenant);
        return { state: "absent" };
      }
      const phase = resource.status?.phase ?? "Pending";
      if (resource.metadata.deletionTimestamp) {
        return { state: "unavailable", phase: "Deleting", message: `Tenant "${tenant}" is being deleted.` };
      }
      if (resource.spec?.suspend) {
        return {
          state: "unavailable",
          phase: "Suspended",
          message: `Tenant "${tenant}" is suspended; an operator can resume it.`,
        };
      }
      const serving = resource.status?.conditions?.find(
        (condition) => condition.type === "ControlPlaneReady",
      );
      if (serving?.status !== "True") {
        const ready = resource.status?.conditions?.find((condition) => condition.type === "Ready");
        return {
          state: "unavailable",
          phase,
          message: `Tenant "${tenant}"'s control plane is not serving (${phase}${ready?.message ? `: ${ready.message}` : ""}).`,
        };
      }
      const provisionerName =
        resource.status?.provisioner ??
        resource.spec?.controlPlane?.provisioner ??
        options.defaultProvisioner;
      const provisioner = options.provisioners[provisionerName];
      if (!provisioner) {
        return {
          state: "unavailable",
          phase,
          message: `The "${provisionerName}" provisioner is not enabled on this Ring0.`,
        };
      }
      const key = `${provisionerName}|${resource.status?.endpoint ?? ""}`;
      const cached = cache.get(tenant);
      if (cached && cached.key === key && now() - cached.at < ttl) {
        return { state: "ready", access: cached.access, version: resource.status?.version };
      }
      const access = await provisioner.access(tenant);
      if (!access) {
        cache.delete(tenant);
        return {
          state: "unavailable",
          phase,
          message: `Tenant "${tenant}"'s control plane is not reachable yet.`,
        };
      }
      cache.set(tenant, { key, at: now(), access });
      return { state: "ready", access, version: resource.status?.version };
    },
  };
}
