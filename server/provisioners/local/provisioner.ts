/**
 * The local provisioner: one kwokctl binary-runtime cluster per tenant — etcd, kube-apiserver and
 * kube-controller-manager as processes on 127.0.0.1 (no scheduler, no kwok-controller: a tenant
 * control plane has no nodes of its own). Binaries come from scripts/kube-build.sh, never the network.
 *
 * State, all under `<stateDir>/tenants/<tenant>/` (kwokctl's KWOK_WORKDIR for that tenant; ./paths.ts):
 *   ring0.json                     Ring0's record: version, bin dir, ports, created time, stopped on purpose
 *   kwok.yaml                      the KwokctlConfiguration Ring0 writes (binaries, 127.0.0.1, ports)
 *   kubeconfig                     admin kubeconfig kwokctl writes (for a person debugging)
 *   clusters/ring0-<tenant>/       kwokctl's cluster: kwok.yaml (what `start` runs), pki/, etcd/, logs/, pids/, bin/
 *   etcd-pki/                      etcd's own CA, serving and kube-apiserver client certificates (root-only)
 *   authentication-config.yaml     kube-apiserver's: anonymous requests only on health endpoints
 *
 *   vn-agent/                      the apiserver's kubelet client certificate (from the vn-agent client CA) and
 *                                  the vn-agent serving CA it verifies kubelets (vn-agents) with
 *
 * The record (./record.ts) is what lets a restarted Ring0 adopt what runs and stop it with the
 * binaries it was started with. Changing version or ports of an existing cluster rewrites kwokctl's
 * saved cluster config (./kwokctl-config.ts) while it is stopped, so etcd's data and the PKI are kept.
 * This file decides which steps (./lifecycle.ts) an `ensure` takes, one operation at a time per tenant.
 */
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { closeKwokctlKeys } from "@/server/cluster/hardening";
import { withAllComponentEnvs, withAllComponentFlags } from "@/server/cluster/kwokctl-config";
import { hasPodApiAddress } from "@/server/cluster/real-node/host-firewall";
import { POD_API_ADDRESS } from "@/server/cluster/real-node/plan";
import { type PodApiListener, startPodApiListener } from "@/server/cluster/real-node/pod-api";
import { isTearingDown } from "@/server/cluster/teardown";
import { getSuperCluster } from "@/server/k8s/cluster";
import type { Logger } from "@/server/logger";
import { DEFAULT_CONTROL_PLANE_GOGC, goRuntimeEnv } from "../go-runtime";
import { type ControlPlaneSpec, ControlPlaneSpecError, type Provisioner } from "../types";
import { resolveVersion } from "../versions";
import { hasKwokctl, localBinaries } from "./binaries";
import { componentStates, LOCAL_COMPONENTS } from "./components";
import { type EgressProxy, type EgressRefusal, egressPaths, startEgressProxy } from "./egress";
import { type EgressPolicy, isTenantPodIp, tokenBuckets } from "./egress-policy";
import { retarget, wantedFlags } from "./kwokctl-config";
import {
  createControlPlane,
  killComponents,
  type LocalMachine,
  removeControlPlane,
  restartExited,
  startControlPlane,
  stopControlPlane,
} from "./lifecycle";
import { answersReadiness, observeControlPlane, probeControlPlane, readAccess } from "./observe";
import { checkTenantName, listTenantDirs, readText, tenantPaths, writeAtomically } from "./paths";
import { portPicker } from "./ports";
import { readRecord, writeRecord } from "./record";

export interface LocalProvisionerOptions {
  stateDir: string;
  logger: Logger;
  /** Binaries of the version tools/kube builds; default $RING0_KUBE_BIN_DIR, else scripts/kube-build.sh's cache. */
  binDir?: string;
  /** Exact version → bin dir. Default: tools/kube's one version → `binDir`. */
  versions?: Record<string, string>;
  /**
   * State dir whose vn-agent PKI (<dir>/vn-agent-pki) the apiservers' kubelet client certificates
   * come from — Ring0's, where the vn-agents run. Default: `stateDir`; false: no kubelet flags.
   */
  vnAgentStateDir?: string | false;
  /**
   * The egress wall's policy and who hears of its refusals (./egress.ts). Default: Ring0's policy
   * with the process-wide super cluster, no operator allowances; refusals only logged.
   */
  egress?: { policy?: EgressPolicy; onRefused?: (refusal: EgressRefusal) => void };
  /**
   * Whether `ip` is one of `tenant`'s pods, for the listener its pods reach its API server at
   * (./pod-api.ts). Default: asked of the process-wide super cluster (see tenantPodLookup).
   */
  isTenantPod?: (tenant: string, ip: string) => Promise<boolean>;
  /** GOGC of every control-plane process (../go-runtime.ts); default DEFAULT_CONTROL_PLANE_GOGC. */
  goGc?: number;
}

/**
 * Ring0's default for `isTenantPod`: the super cluster's word, remembered 10 s either way. Lookups
 * are budgeted per connecting address (5 a second, bursts of 20), so one pod knocking on every
 * tenant's port costs the super cluster little and no tenant's own pods their turn; a refusal is
 * logged once per tenant and address while remembered.
 */
function tenantPodLookup(logger: Logger): (tenant: string, ip: string) => Promise<boolean> {
  const remembered = new Map<string, { admitted: boolean; at: number }>();
  const lookups = tokenBuckets(5, 20);
  const log = logger.child({ component: "pod-api" });
  return async (tenant, ip) => {
    const key = `${tenant}|${ip}`;
    const known = remembered.get(key);
    if (known && Date.now() - known.at < 10_000) return known.admitted;
    const conn = getSuperCluster();
    if (!conn || !lookups.take(ip)) return false;
    const admitted = await isTenantPodIp(conn, tenant, ip, { starting: true });
    if (remembered.size > 10_000) remembered.clear();
    remembered.set(key, { admitted, at: Date.now() });
    if (!admitted)
      log.info("a connection to a tenant's API server from outside its pods refused", { tenant, source: ip });
    return admitted;
  };
}

/** Whether the tenant API server's certificate (kwokctl's admin.crt) names POD_API_ADDRESS. */
function servesPodApiAddress(pki: string): boolean {
  const pem = readText(path.join(pki, "admin.crt"));
  if (!pem) return false;
  try {
    return (new X509Certificate(pem).subjectAltName ?? "")
      .split(", ")
      .includes(`IP Address:${POD_API_ADDRESS}`);
  } catch {
    return false;
  }
}

export function createLocalProvisioner(options: LocalProvisionerOptions): Provisioner {
  const stateDir = path.resolve(options.stateDir);
  const tenantsDir = path.join(stateDir, "tenants");
  const baseLog = options.logger.child({ component: "local-provisioner" });
  const machine: LocalMachine = {
    binaries: localBinaries(options, baseLog),
    ports: portPicker(tenantsDir),
    vnAgentStateDir: options.vnAgentStateDir === false ? undefined : (options.vnAgentStateDir ?? stateDir),
    envs: Object.fromEntries(
      LOCAL_COMPONENTS.map((component) => [
        component,
        goRuntimeEnv(options.goGc ?? DEFAULT_CONTROL_PLANE_GOGC),
      ]),
    ),
  };
  /** Per-tenant promise chains: one operation at a time per tenant. */
  const queues = new Map<string, Promise<unknown>>();
  /** Tenants with an `ensure` under way (observe says Starting rather than Failed for their gaps). */
  const ensuring = new Set<string>();
  /** Each tenant's egress wall (./egress.ts), served by this process for its control plane. */
  const egress = new Map<string, EgressProxy>();
  const ensureEgress = async (tenant: string, log: Logger) => {
    if (egress.has(tenant)) return;
    const { sockets } = egressPaths(pathsOf(tenant).dir);
    egress.set(
      tenant,
      await startEgressProxy({
        tenant,
        sockets,
        logger: log,
        policy: options.egress?.policy,
        onRefused: options.egress?.onRefused,
      }),
    );
  };

  const serialise = <T>(tenant: string, task: () => Promise<T>): Promise<T> => {
    const previous = queues.get(tenant) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    queues.set(tenant, settled);
    void settled.then(() => {
      if (queues.get(tenant) === settled) queues.delete(tenant);
    });
    return next;
  };

  /**
   * Each tenant's listener where its pods reach its API server (./pod-api.ts): opened when Ring0
   * asks for the tenant's access (its control plane serves) and the host has the pods' API address
   * (real nodes set it up); closed when the tenant is suspended or destroyed.
   */
  const podApis = new Map<string, PodApiListener>();
  const isTenantPod = options.isTenantPod ?? tenantPodLookup(baseLog);
  const podApiChanges = new Map<string, Promise<void>>();
  const certWarned = new Set<string>();
  /** One change at a time per tenant (access is asked for concurrently). */
  const ensurePodApi = (tenant: string, apiserverPort: number, log: Logger): Promise<void> => {
    const previous = podApiChanges.get(tenant) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (podApis.get(tenant)?.port === apiserverPort) return;
      await closePodApi(tenant);
      if (!hasPodApiAddress()) return;
      if (!servesPodApiAddress(pathsOf(tenant).pki)) {
        if (!certWarned.has(tenant)) {
          certWarned.add(tenant);
          log.warn(
            "the tenant's API server certificate does not name the pods' API address (the control plane predates it); its pods get no tokens until it is recreated",
            { address: POD_API_ADDRESS },
          );
        }
        return;
      }
      try {
        podApis.set(
          tenant,
          await startPodApiListener({
            owner: tenant,
            host: POD_API_ADDRESS,
            port: apiserverPort,
            upstreamPort: apiserverPort,
            isTenantPod: (ip) => isTenantPod(tenant, ip),
            logger: log,
          }),
        );
      } catch (error) {
        log.warn("the tenant's pods cannot reach its API server: listening failed", {
          address: `${POD_API_ADDRESS}:${apiserverPort}`,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    });
    const settled = next.finally(() => {
      if (podApiChanges.get(tenant) === settled) podApiChanges.delete(tenant);
    });
    podApiChanges.set(tenant, settled);
    return next;
  };
  const closePodApi = async (tenant: string) => {
    await podApis.get(tenant)?.close();
    podApis.delete(tenant);
  };

  const pathsOf = (tenant: string) => tenantPaths(tenantsDir, tenant);
  const observeNow = (tenant: string) => observeControlPlane(tenant, pathsOf(tenant), ensuring.has(tenant));

  const ensureNow = async (spec: ControlPlaneSpec, version: string, signal?: AbortSignal) => {
    signal?.throwIfAborted();
    const { tenant } = spec;
    const log = baseLog.child({ tenant });
    const paths = pathsOf(tenant);
    const binDir = await machine.binaries.binDirFor(version);
    let record = readRecord(paths);
    // Before its API server can call anything, the wall it calls through.
    await ensureEgress(tenant, log);

    if (fs.existsSync(paths.dir) && (!record || !fs.existsSync(paths.clusterConfig))) {
      log.warn("removing a half-created control plane before creating it again", { dir: paths.dir });
      await removeControlPlane(machine, tenant, paths, log);
      record = undefined;
    }
    if (!record) {
      record = await createControlPlane(machine, tenant, paths, version, binDir, log);
      if (!spec.suspended) return observeNow(tenant);
    }

    // Same version on a rebuilt cache keeps its binaries while they exist; a new version moves.
    if (record.version !== version || !hasKwokctl(record.binDir)) {
      log.info("moving the control plane to another version", { from: record.version, to: version, binDir });
      await stopControlPlane(machine, tenant, paths, record, log);
      retarget(paths, record, { binDir });
      record = { ...record, version, binDir, stopped: true };
      writeRecord(paths, record);
    }

    const states = Object.values(componentStates(paths));
    if (spec.suspended) {
      if (!record.stopped || states.some((state) => state !== "stopped")) {
        log.info("stopping the control plane (suspended; data kept)");
        await stopControlPlane(machine, tenant, paths, record, log);
        record = { ...record, stopped: true };
        writeRecord(paths, record);
      }
      return observeNow(tenant);
    }

    // Control planes created before (the vn-agents, the walls, other certificates) get their flags
    // now: restarted with them.
    const savedConfig = readText(paths.clusterConfig) ?? "";
    const flagged = withAllComponentFlags(
      savedConfig,
      await wantedFlags(machine.vnAgentStateDir, tenant, paths, record.ports),
    );
    const patched = "text" in flagged ? withAllComponentEnvs(flagged.text, machine.envs) : flagged;
    if ("missing" in patched) {
      // Never started without its walls (plain-text etcd, anonymous access): a terminal refusal.
      if (states.some((state) => state !== "stopped"))
        await stopControlPlane(machine, tenant, paths, record, log);
      throw new ControlPlaneSpecError(
        `${paths.clusterConfig} has no ${patched.missing} component, so the control plane cannot be started behind its walls; delete the tenant's control plane (it is recreated) or restore that file`,
      );
    }
    if (patched.text !== savedConfig) {
      if (states.some((state) => state !== "stopped")) {
        log.info(
          "restarting the control plane with its current flags and environment (vn-agents, etcd TLS, authentication, GOGC)",
        );
        await stopControlPlane(machine, tenant, paths, record, log);
      }
      writeAtomically(paths.clusterConfig, patched.text);
      signal?.throwIfAborted();
      await startControlPlane(machine, tenant, paths, record, log);
      return observeNow(tenant);
    }
    closeKwokctlKeys(paths.pki);

    if (states.every((state) => state === "running") && !spec.restart?.length) {
      if (record.stopped) writeRecord(paths, { ...record, stopped: false });
      return observeNow(tenant);
    }
    // Components found not answering (a hung API server) are killed, then started like dead ones.
    // A second, longer look first: a busy host, not a hung process, may have failed the probes.
    const hung = LOCAL_COMPONENTS.filter((component) => spec.restart?.includes(component));
    if (hung.length > 0 && !record.stopped) {
      if (await answersReadiness(paths, 5_000))
        log.info("a component reported hung answers again; left running", { hung });
      else await killComponents(paths, hung, log);
    }
    // Some components died: start them again beside the ones that serve.
    const componentsNow = componentStates(paths);
    const exited = LOCAL_COMPONENTS.filter((component) => componentsNow[component] === "exited");
    const running = LOCAL_COMPONENTS.filter((component) => componentsNow[component] === "running");
    if (!record.stopped && exited.length > 0 && running.length > 0) {
      signal?.throwIfAborted();
      if (await restartExited(tenant, paths, record, exited, log)) return observeNow(tenant);
    }
    // Stopped, or a port of a dead component was taken: stop what is left, then start all on free ports.
    if (states.some((state) => state !== "stopped")) {
      log.warn("components exited; restarting the control plane", { states: componentStates(paths) });
      await stopControlPlane(machine, tenant, paths, record, log);
    }
    signal?.throwIfAborted();
    await startControlPlane(machine, tenant, paths, record, log);
    return observeNow(tenant);
  };

  return {
    name: "local",

    ensure(spec, signal) {
      // Before the queue: a bad name or an unknown version is the caller's to fix, not to retry.
      let tenant: string;
      let version: string;
      try {
        tenant = checkTenantName(spec.tenant);
        version = resolveVersion(spec.version, machine.binaries.knownVersions());
      } catch (error) {
        return Promise.reject(error);
      }
      return serialise(tenant, async () => {
        ensuring.add(tenant);
        try {
          const observed = await ensureNow({ ...spec, tenant }, version, signal);
          if (spec.suspended) await closePodApi(tenant);
          return observed;
        } finally {
          ensuring.delete(tenant);
        }
      });
    },

    async observe(tenant) {
      return observeNow(checkTenantName(tenant));
    },

    async probe(tenant) {
      const name = checkTenantName(tenant);
      // An ensure under way is already changing the processes; it reports what it finds.
      if (ensuring.has(name) || queues.has(name) || isTearingDown(stateDir)) return undefined;
      return probeControlPlane(pathsOf(name));
    },

    async access(tenant) {
      const paths = pathsOf(checkTenantName(tenant));
      const access = await readAccess(paths);
      const record = readRecord(paths);
      if (!access || !record) return access;
      // Asked for while the control plane serves: its pods' way to it, once the host has the address.
      await ensurePodApi(tenant, record.ports.kubeApiserverPort, baseLog.child({ tenant }));
      const podApi = podApis.get(tenant);
      return podApi ? { ...access, podEndpoint: { host: podApi.host, port: podApi.port } } : access;
    },

    destroy(tenant) {
      try {
        checkTenantName(tenant);
      } catch (error) {
        return Promise.reject(error);
      }
      return serialise(tenant, async () => {
        const paths = pathsOf(tenant);
        if (!fs.existsSync(paths.dir)) return;
        const log = baseLog.child({ tenant });
        await closePodApi(tenant);
        await removeControlPlane(machine, tenant, paths, log);
        await egress.get(tenant)?.close();
        egress.delete(tenant);
        for (const socket of Object.values(egressPaths(paths.dir).sockets))
          fs.rmSync(socket, { force: true });
        log.info("control plane destroyed", { dir: paths.dir });
      });
    },

    async list() {
      return listTenantDirs(tenantsDir);
    },
  };
}
