/**
 * Where Ring0 finds a tenant's control plane at request time (the kube gateway, kubeconfig
 * downloads, the portal). The runtime installs one directory at start-up; it lives on globalThis
 * because the custom server and Next's route handlers are separate module graphs.
 */
import type { ControlPlaneAccess } from "@/server/provisioners/types";

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

const directoryKey = Symbol.for("ring0.tenants.controlPlaneDirectory");
type GlobalWithDirectory = typeof globalThis & { [directoryKey]?: ControlPlaneDirectory | null };

export function setControlPlaneDirectory(directory: ControlPlaneDirectory | null): void {
  (globalThis as GlobalWithDirectory)[directoryKey] = directory;
}

export function getControlPlaneDirectory(): ControlPlaneDirectory | null {
  return (globalThis as GlobalWithDirectory)[directoryKey] ?? null;
}
