/**
 * The processes of a tenant's local control plane, as kwokctl leaves them: a pid file per component
 * under `clusters/<name>/pids/` and a log file under `logs/`. A pid file may outlive its process
 * (crash, reboot), so a component runs only when that pid's command line still mentions its dir.
 */
import path from "node:path";
import { type ComponentState, kwokctlComponentStates, processesMentioning } from "@/server/cluster/process";
import { readText, type TenantPaths } from "./paths";

/** The components of a tenant control plane, in kwokctl's names (also its pid and log file names). */
export const LOCAL_COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager"] as const;
export type LocalComponent = (typeof LOCAL_COMPONENTS)[number];

/** Stopped: no pid file; exited: a pid file whose process is gone. */
export type { ComponentState };

export function componentStates(paths: TenantPaths): Record<LocalComponent, ComponentState> {
  return kwokctlComponentStates(paths.clusterDir, LOCAL_COMPONENTS);
}

/** Pids of the tenant's processes: from kwokctl's pid files and from /proc command lines. */
export function processesOf(paths: TenantPaths): number[] {
  const pids = new Set(processesMentioning(`${paths.dir}/`));
  for (const component of LOCAL_COMPONENTS) {
    const pid = Number(readText(path.join(paths.clusterDir, "pids", `${component}.pid`))?.trim());
    if (Number.isInteger(pid) && pid > 0 && componentStates(paths)[component] === "running") pids.add(pid);
  }
  return [...pids];
}

/** A component's log file. */
export function componentLogFile(paths: TenantPaths, component: LocalComponent): string {
  return path.join(paths.clusterDir, "logs", `${component}.log`);
}

/** The last non-empty line of a log file, at most 300 characters. */
export function lastLogLine(file: string): string | undefined {
  const text = readText(file);
  const line = text
    ?.trim()
    .split("\n")
    .reverse()
    .find((candidate) => candidate.trim());
  return line ? line.trim().slice(0, 300) : undefined;
}
