/**
 * A tenant's local control plane as it is, read from its dir, /proc and its API server: the phase
 * the Tenant's status shows, with a message that says what to do about gaps (an `ensure` under way
 * turns "Failed" gaps into "Starting"), and the admin access Ring0 reads from kwokctl's PKI.
 */
import fs from "node:fs";
import path from "node:path";
import { clusterHealth, clusterVersion, connectCluster } from "@/server/k8s/cluster";
import { readyzProblem, unresponsiveFault } from "../readyz";
import {
  type ControlPlaneAccess,
  type ControlPlaneFault,
  type ControlPlaneObservation,
  kubeconfigFromAccess,
} from "../types";
import { componentLogFile, componentStates, LOCAL_COMPONENTS, lastLogLine } from "./components";
import { localClusterName, readText, type TenantPaths } from "./paths";
import { endpointOf, readRecord } from "./record";

/** The admin access of a tenant's control plane; undefined before it has a record and a PKI. */
export function readAccess(paths: TenantPaths): ControlPlaneAccess | undefined {
  const record = readRecord(paths);
  if (!record) return undefined;
  const ca = readText(path.join(paths.pki, "ca.crt"));
  const cert = readText(path.join(paths.pki, "admin.crt"));
  const key = readText(path.join(paths.pki, "admin.key"));
  if (!ca || !cert || !key) return undefined;
  return { server: endpointOf(record), ca, cert, key };
}

function connectionOf(tenant: string, access: ControlPlaneAccess) {
  return connectCluster(`tenant-${tenant}`, {
    inline: kubeconfigFromAccess(access, localClusterName(tenant)),
  });
}

function exitedMessage(paths: TenantPaths, component: (typeof LOCAL_COMPONENTS)[number]): string {
  const log = componentLogFile(paths, component);
  const last = lastLogLine(log);
  return `${component} exited (see ${log}${last ? `; last line: ${last}` : ""})`;
}

/**
 * The watchdog's check of a control plane that should serve: a component process that exited,
 * else an API server whose /readyz does not answer 200 within `timeoutMs`. Nothing for a control
 * plane that is absent, incomplete or stopped (suspended, or not started yet).
 */
export async function probeControlPlane(
  paths: TenantPaths,
  timeoutMs = 1_500,
): Promise<ControlPlaneFault | undefined> {
  const record = readRecord(paths);
  if (!record || record.stopped) return undefined;
  const states = componentStates(paths);
  if (LOCAL_COMPONENTS.every((component) => states[component] === "stopped")) return undefined;
  const down = LOCAL_COMPONENTS.find((component) => states[component] !== "running");
  if (down) {
    return {
      component: down,
      kind: "exited",
      message: states[down] === "exited" ? `${down} exited` : `${down} is not running`,
      detail: exitedMessage(paths, down),
    };
  }
  const access = readAccess(paths);
  if (!access) return undefined;
  return unresponsiveFault(await readyzProblem(access, timeoutMs));
}

/** Whether the control plane's API server answers /readyz within `timeoutMs` (a second look before a kill). */
export async function answersReadiness(paths: TenantPaths, timeoutMs: number): Promise<boolean> {
  const access = readAccess(paths);
  return access !== undefined && (await readyzProblem(access, timeoutMs)) === undefined;
}

export async function observeControlPlane(
  tenant: string,
  paths: TenantPaths,
  ensuring: boolean,
): Promise<ControlPlaneObservation> {
  if (!fs.existsSync(paths.dir)) return { phase: "Absent" };
  const record = readRecord(paths);
  if (!record || !fs.existsSync(paths.clusterConfig)) {
    if (ensuring) return { phase: "Starting", message: "The control plane is being created." };
    return {
      phase: "Failed",
      message: `The control plane in ${paths.dir} is incomplete (creation was interrupted); ensuring it again recreates it, destroying it removes it.`,
    };
  }
  const endpoint = endpointOf(record);
  const states = componentStates(paths);
  const exited = LOCAL_COMPONENTS.filter((component) => states[component] === "exited");
  const running = LOCAL_COMPONENTS.filter((component) => states[component] === "running");
  if (exited.length > 0) {
    if (ensuring) return { phase: "Starting", endpoint, message: "The control plane is being restarted." };
    const details = exited.map((component) => exitedMessage(paths, component));
    return { phase: "Failed", endpoint, message: `${details.join("; ")}. Ensuring it again restarts it.` };
  }
  if (running.length === 0) {
    return {
      phase: "Stopped",
      endpoint,
      message: record.stopped
        ? "Suspended: no processes run; the data is kept."
        : ensuring
          ? "The control plane is being started."
          : "No processes run although it is not suspended; ensuring it starts it.",
    };
  }
  if (running.length < LOCAL_COMPONENTS.length) {
    return { phase: "Starting", endpoint, message: "Some components are not started yet." };
  }
  const access = readAccess(paths);
  if (!access) return { phase: "Failed", endpoint, message: `The PKI in ${paths.pki} is missing.` };
  const conn = connectionOf(tenant, access);
  const health = await clusterHealth(conn, { timeoutMs: 3_000 });
  if (!health.ok)
    return { phase: "Starting", endpoint, message: `Not ready yet: ${health.detail.slice(0, 300)}` };
  try {
    const version = await clusterVersion(conn);
    return { phase: "Running", endpoint, version: version.gitVersion };
  } catch {
    return { phase: "Running", endpoint };
  }
}
