/**
 * The steps of a tenant's local control plane, each through kwokctl and then checked in /proc:
 * create (with fresh ports, again when one was taken meanwhile), start (moving off ports something
 * else took), stop (data kept; "stopped" means the processes have exited, so their ports are free)
 * and remove (kwokctl delete, then SIGKILL for whatever still mentions the tenant's dir).
 */

import fs from "node:fs";
import path from "node:path";
import { closeKwokctlKeys } from "@/server/cluster/hardening";
import { runKwokctl } from "@/server/cluster/kwokctl";
import type { ComponentEnvs } from "@/server/cluster/kwokctl-config";
import { isPortFree } from "@/server/cluster/ports";
import {
  CommandError,
  clearExitedPidFiles,
  killProcessesMentioning,
  waitExited,
} from "@/server/cluster/process";
import type { Logger } from "@/server/logger";
import type { LocalBinaries } from "./binaries";
import { componentStates, LOCAL_COMPONENTS, type LocalComponent, processesOf } from "./components";
import { controlPlaneCreateArgs, retarget, wantedFlags, writeKwokctlConfig } from "./kwokctl-config";
import { localClusterName, readText, type TenantPaths } from "./paths";
import type { PortPicker } from "./ports";
import { type LocalControlPlaneRecord, readRecord, writeRecord } from "./record";

const CREATE_TIMEOUT_MS = 3 * 60_000;
const START_TIMEOUT_MS = 3 * 60_000;
const STOP_TIMEOUT_MS = 60_000;
const CREATE_ATTEMPTS = 3;

/** What every tenant's control plane on this machine shares. */
export interface LocalMachine {
  binaries: LocalBinaries;
  ports: PortPicker;
  /** State dir of the vn-agent PKI the apiservers' kubelet client certificates come from; none: no vn-agents. */
  vnAgentStateDir: string | undefined;
  /** Environment of the control-plane processes (Go runtime settings, ../go-runtime.ts). */
  envs: ComponentEnvs;
}

function kwokctl(
  tenant: string,
  paths: TenantPaths,
  binDir: string,
  args: string[],
  timeoutMs: number,
  log: Logger,
) {
  return runKwokctl(
    { workDir: paths.dir, name: localClusterName(tenant), configPath: paths.config },
    binDir,
    args,
    { timeoutMs, logger: log },
  );
}

/** Remove whatever exists of a tenant's control plane: kwokctl's cluster, stray processes, files. */
export async function removeControlPlane(
  machine: LocalMachine,
  tenant: string,
  paths: TenantPaths,
  log: Logger,
): Promise<void> {
  if (!fs.existsSync(paths.dir)) return;
  const binDir = await machine.binaries.managingBinDir(readRecord(paths));
  const pids = processesOf(paths);
  if (binDir && fs.existsSync(paths.clusterDir)) {
    await kwokctl(tenant, paths, binDir, ["delete", "cluster"], STOP_TIMEOUT_MS, log).catch(
      (error: unknown) => log.warn("kwokctl delete cluster failed; killing what is left", { error }),
    );
  }
  const killed = await killProcessesMentioning(`${paths.dir}/`);
  if (killed.length > 0) log.warn("killed leftover control plane processes", { pids: killed });
  // Stopped means the ports are free again.
  await waitExited(pids);
  fs.rmSync(paths.dir, { recursive: true, force: true });
}

export async function createControlPlane(
  machine: LocalMachine,
  tenant: string,
  paths: TenantPaths,
  version: string,
  binDir: string,
  log: Logger,
): Promise<LocalControlPlaneRecord> {
  for (let attempt = 1; ; attempt++) {
    const ports = await machine.ports.pick();
    try {
      fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
      writeKwokctlConfig(
        paths,
        binDir,
        ports,
        await wantedFlags(machine.vnAgentStateDir, tenant, paths, ports),
        machine.envs,
      );
      const record: LocalControlPlaneRecord = {
        version,
        binDir,
        ports,
        createdAt: new Date().toISOString(),
        stopped: false,
      };
      writeRecord(paths, record);
      log.info("creating the control plane (kwokctl, binary runtime)", { version, ports, dir: paths.dir });
      try {
        await kwokctl(
          tenant,
          paths,
          binDir,
          controlPlaneCreateArgs(paths.kubeconfig),
          CREATE_TIMEOUT_MS,
          log,
        );
        closeKwokctlKeys(paths.pki);
        return record;
      } catch (error) {
        await removeControlPlane(machine, tenant, paths, log);
        const text = error instanceof CommandError ? `${error.result.stderr}\n${error.result.stdout}` : "";
        if (attempt < CREATE_ATTEMPTS && /address already in use/.test(text)) {
          log.warn("a chosen port was taken meanwhile; creating again with other ports", { attempt });
          continue;
        }
        throw new Error(
          `creating the local control plane of ${tenant} failed: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
    } finally {
      machine.ports.release(ports);
    }
  }
}

/** Stop the processes (kwokctl stop; data kept), then make sure none is left. */
export async function stopControlPlane(
  machine: LocalMachine,
  tenant: string,
  paths: TenantPaths,
  record: LocalControlPlaneRecord,
  log: Logger,
): Promise<void> {
  const binDir = await machine.binaries.managingBinDir(record);
  const pids = processesOf(paths);
  if (binDir) {
    await kwokctl(tenant, paths, binDir, ["stop", "cluster"], STOP_TIMEOUT_MS, log).catch((error: unknown) =>
      log.warn("kwokctl stop cluster failed; killing the processes", { error }),
    );
  }
  const killed = await killProcessesMentioning(`${paths.clusterDir}/`);
  if (killed.length > 0) log.warn("killed control plane processes kwokctl left running", { pids: killed });
  for (const component of LOCAL_COMPONENTS) {
    fs.rmSync(path.join(paths.clusterDir, "pids", `${component}.pid`), { force: true });
  }
  await waitExited(pids);
}

/** `kwokctl start cluster`: starts what does not run, then waits until the API server serves. */
function startKwokctlCluster(tenant: string, paths: TenantPaths, binDir: string, log: Logger) {
  return kwokctl(tenant, paths, binDir, ["start", "cluster", "--timeout", "2m"], START_TIMEOUT_MS, log);
}

/** SIGKILLs running components (ones found hung) and waits until they are gone; their pid files stay. */
export async function killComponents(
  paths: TenantPaths,
  components: LocalComponent[],
  log: Logger,
): Promise<void> {
  const pids: number[] = [];
  const states = componentStates(paths);
  for (const component of components) {
    const pid = Number(readText(path.join(paths.clusterDir, "pids", `${component}.pid`))?.trim());
    if (!Number.isInteger(pid) || pid <= 0 || states[component] !== "running") continue;
    log.warn("killing a component that stopped answering, to start it again", { component, pid });
    try {
      process.kill(pid, "SIGKILL");
      pids.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  await waitExited(pids);
}

/** The ports each component binds (kwokctl's component names). */
const componentPorts: Record<LocalComponent, (keyof LocalControlPlaneRecord["ports"])[]> = {
  etcd: ["etcdPort", "etcdPeerPort"],
  "kube-apiserver": ["kubeApiserverPort"],
  "kube-controller-manager": ["kubeControllerManagerPort"],
};

/**
 * Starts only the components that exited while the others keep serving (kwokctl's start skips
 * the ones with a running pid, then waits until the API server serves): an API server back in seconds, with etcd
 * and its watchers untouched. False when a port of theirs is taken meanwhile: then the caller
 * restarts the whole control plane on new ports.
 */
export async function restartExited(
  tenant: string,
  paths: TenantPaths,
  record: LocalControlPlaneRecord,
  exited: LocalComponent[],
  log: Logger,
): Promise<boolean> {
  for (const component of exited) {
    for (const port of componentPorts[component]) if (!(await isPortFree(record.ports[port]))) return false;
  }
  log.warn("components exited; starting them again", { components: exited });
  clearExitedPidFiles(paths.clusterDir, exited);
  await startKwokctlCluster(tenant, paths, record.binDir, log);
  return true;
}

export async function startControlPlane(
  machine: LocalMachine,
  tenant: string,
  paths: TenantPaths,
  record: LocalControlPlaneRecord,
  log: Logger,
): Promise<LocalControlPlaneRecord> {
  // kwokctl only warns (after minutes) when a component cannot bind: check the ports first.
  const busy: number[] = [];
  for (const port of Object.values(record.ports)) if (!(await isPortFree(port))) busy.push(port);
  let current = record;
  if (busy.length > 0) {
    const ports = await machine.ports.pick();
    try {
      log.warn("recorded ports are taken by something else; moving the control plane to new ports", {
        busy,
        ports,
      });
      retarget(paths, current, { ports });
      current = { ...current, ports };
      writeRecord(paths, current);
    } finally {
      machine.ports.release(ports);
    }
  }
  current = { ...current, stopped: false };
  writeRecord(paths, current);
  log.info("starting the control plane", { version: current.version });
  await startKwokctlCluster(tenant, paths, current.binDir, log);
  return current;
}
