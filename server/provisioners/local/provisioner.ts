/**
 * The local provisioner: one kwokctl binary-runtime cluster per tenant — etcd, kube-apiserver and
 * kube-controller-manager as processes on 127.0.0.1 (no scheduler, no kwok-controller: a tenant
 * control plane has no nodes of its own). Binaries come from scripts/kube-build.sh, never the network.
 *
 * State, all under `<stateDir>/tenants/<tenant>/` (kwokctl's KWOK_WORKDIR for that tenant):
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
 * The record is what lets a restarted Ring0 adopt what runs and stop it with the binaries it was
 * started with. Changing version or ports of an existing cluster rewrites kwokctl's saved cluster
 * config (`clusters/<name>/kwok.yaml`) while it is stopped, so etcd's data and the PKI are kept.
 */
import fs from "node:fs";
import path from "node:path";
import {
  anonymousHealthOnlyFlags,
  closeKwokctlKeys,
  ensureEtcdPki,
  etcdTlsFlags,
  onlyComponents,
  writeAuthenticationConfiguration,
} from "@/server/cluster/hardening";
import { kubeBinaries, runKwokctl } from "@/server/cluster/kwokctl";
import {
  type ComponentFlags,
  mergeComponentFlags,
  renderKwokctlConfig,
  withAllComponentFlags,
} from "@/server/cluster/kwokctl-config";
import { freePortsFor, isPortFree } from "@/server/cluster/ports";
import {
  CommandError,
  killProcessesMentioning,
  processesMentioning,
  waitExited,
} from "@/server/cluster/process";
import { clusterHealth, clusterVersion, connectCluster } from "@/server/k8s/cluster";
import type { Logger } from "@/server/logger";
import { certificateStillGood, ensureVnAgentPki } from "@/server/vn-agent/pki";
import {
  type ControlPlaneAccess,
  type ControlPlaneObservation,
  type ControlPlaneSpec,
  ControlPlaneSpecError,
  kubeconfigFromAccess,
  type Provisioner,
} from "../types";
import { availableVersions, resolveVersion } from "../versions";

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
}

/** The components of a tenant control plane, in kwokctl's names (also its pid and log file names). */
export const LOCAL_COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager"] as const;
export type LocalComponent = (typeof LOCAL_COMPONENTS)[number];

const PORT_OPTIONS = ["kubeApiserverPort", "etcdPort", "etcdPeerPort", "kubeControllerManagerPort"] as const;
export type LocalControlPlanePorts = Record<(typeof PORT_OPTIONS)[number], number>;

/** What Ring0 remembers of a tenant's local control plane (`ring0.json`). */
export interface LocalControlPlaneRecord {
  /** Exact Kubernetes version ("1.36.4"). */
  version: string;
  /** The binaries it runs on (and the kwokctl that manages it). */
  binDir: string;
  ports: LocalControlPlanePorts;
  /** ISO time of creation. */
  createdAt: string;
  /** Stopped on purpose (suspended) — as opposed to processes that died. */
  stopped: boolean;
}

const TENANT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const CREATE_TIMEOUT_MS = 3 * 60_000;
const START_TIMEOUT_MS = 3 * 60_000;
const STOP_TIMEOUT_MS = 60_000;
const CREATE_ATTEMPTS = 3;

/**
 * `kwokctl create cluster` arguments of a tenant control plane: the binary runtime, etcd,
 * kube-apiserver and kube-controller-manager only (a tenant has no nodes of its own to schedule
 * to). Benchmarks make their bare baseline with the same arguments, so it cannot drift from this.
 */
export function controlPlaneCreateArgs(kubeconfig?: string): string[] {
  return [
    "create",
    "cluster",
    "--runtime",
    "binary",
    "--disable",
    "kube-scheduler,kwok-controller",
    ...(kubeconfig ? ["--kubeconfig", kubeconfig] : []),
    "--timeout",
    "2m",
  ];
}

/** Tenant names become paths: refuse anything but a short DNS label. */
export function checkTenantName(tenant: string): string {
  if (tenant.length > 40 || !TENANT_NAME.test(tenant)) {
    throw new ControlPlaneSpecError(
      `"${tenant}" is not a valid tenant name for a local control plane: lowercase letters, digits and "-", at most 40 characters`,
    );
  }
  return tenant;
}

/** The kwokctl cluster name of a tenant. */
export function localClusterName(tenant: string): string {
  return `ring0-${tenant}`;
}

/** `ring0.json` → record; undefined for anything incomplete or malformed. */
export function parseLocalRecord(text: string): LocalControlPlaneRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Partial<Record<keyof LocalControlPlaneRecord, unknown>>;
  const ports = record.ports as Partial<Record<string, unknown>> | undefined;
  const validPort = (port: unknown) =>
    typeof port === "number" && Number.isInteger(port) && port > 0 && port < 65536;
  if (
    typeof record.version !== "string" ||
    typeof record.binDir !== "string" ||
    typeof record.createdAt !== "string" ||
    typeof ports !== "object" ||
    ports === null ||
    !PORT_OPTIONS.every((option) => validPort(ports[option]))
  ) {
    return undefined;
  }
  return {
    version: record.version,
    binDir: record.binDir,
    createdAt: record.createdAt,
    stopped: record.stopped === true,
    ports: Object.fromEntries(
      PORT_OPTIONS.map((option) => [option, ports[option]]),
    ) as LocalControlPlanePorts,
  };
}

/** Newest first, by numeric version parts. */
export function sortVersionsNewestFirst(versions: string[]): string[] {
  const parts = (version: string) => version.split(".").map((part) => Number.parseInt(part, 10) || 0);
  return [...versions].sort((a, b) => {
    const [left, right] = [parts(a), parts(b)];
    for (let index = 0; index < Math.max(left.length, right.length); index++) {
      const difference = (right[index] ?? 0) - (left[index] ?? 0);
      if (difference !== 0) return difference;
    }
    return 0;
  });
}

/**
 * Move ports in kwokctl's saved cluster config (or a kubeconfig) from old to new numbers. Only the
 * first YAML document (the components and options) is touched, and only numbers in port positions
 * (`127.0.0.1:N`, `port: N`, `…Port: N`, `--…-port=N`).
 */
export function replacePorts(text: string, moves: ReadonlyMap<number, number>): string {
  const separator = /^---$/m.exec(text);
  const head = separator ? text.slice(0, separator.index) : text;
  const rest = separator ? text.slice(separator.index) : "";
  const moved = head.replace(
    /(127\.0\.0\.1:|localhost:|[pP]ort: |-port=)(\d+)(?!\d)/g,
    (match, prefix: string, port: string) => {
      const next = moves.get(Number(port));
      return next === undefined ? match : `${prefix}${next}`;
    },
  );
  return moved + rest;
}

/** The kube-apiserver flags (without "--") that send its kubelet requests through the vn-agents. */
export function vnAgentKubeletArgs(dir: string): Record<string, string> {
  return {
    "kubelet-client-certificate": path.join(dir, "vn-agent", "kubelet-client.crt"),
    "kubelet-client-key": path.join(dir, "vn-agent", "kubelet-client.key"),
    "kubelet-certificate-authority": path.join(dir, "vn-agent", "vn-agent-ca.crt"),
  };
}

/**
 * The kube-apiserver flag that makes it present its kubelet client certificate to Ring0's
 * admission webhooks too (the quota webhook verifies it and takes the tenant from it).
 */
export function admissionConfigArgs(dir: string): Record<string, string> {
  return { "admission-control-config-file": path.join(dir, "vn-agent", "admission-config.yaml") };
}

/**
 * The AdmissionConfiguration and its kubeconfig: every webhook Ring0 registers gets the tenant
 * apiserver's client certificate ("*": tenant admins cannot register webhooks of their own).
 */
export function admissionConfigFiles(dir: string): Record<string, string> {
  const base = path.join(dir, "vn-agent");
  const kubeconfig = path.join(base, "webhook.kubeconfig");
  return {
    [path.join(base, "admission-config.yaml")]: [
      "apiVersion: apiserver.config.k8s.io/v1",
      "kind: AdmissionConfiguration",
      "plugins:",
      "  - name: ValidatingAdmissionWebhook",
      "    configuration:",
      "      apiVersion: apiserver.config.k8s.io/v1",
      "      kind: WebhookAdmissionConfiguration",
      `      kubeConfigFile: ${JSON.stringify(kubeconfig)}`,
      "",
    ].join("\n"),
    [kubeconfig]: [
      "apiVersion: v1",
      "kind: Config",
      "users:",
      '  - name: "*"',
      "    user:",
      `      client-certificate: ${JSON.stringify(path.join(base, "kubelet-client.crt"))}`,
      `      client-key: ${JSON.stringify(path.join(base, "kubelet-client.key"))}`,
      "",
    ].join("\n"),
  };
}

/** Point binary paths in kwokctl's saved cluster config at another bin dir. */
export function replaceBinDir(text: string, from: string, to: string): string {
  return text.split(`${path.resolve(from)}/`).join(`${path.resolve(to)}/`);
}

interface TenantPaths {
  dir: string;
  record: string;
  config: string;
  kubeconfig: string;
  clusterDir: string;
  clusterConfig: string;
  pki: string;
}

type ComponentState = "running" | "exited" | "stopped";

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}

function lastLogLine(file: string): string | undefined {
  const text = readText(file);
  const line = text
    ?.trim()
    .split("\n")
    .reverse()
    .find((candidate) => candidate.trim());
  return line ? line.trim().slice(0, 300) : undefined;
}

function hasKwokctl(binDir: string | undefined): binDir is string {
  return !!binDir && fs.existsSync(path.join(binDir, "kwokctl"));
}

export function createLocalProvisioner(options: LocalProvisionerOptions): Provisioner {
  const stateDir = path.resolve(options.stateDir);
  const tenantsDir = path.join(stateDir, "tenants");
  const baseLog = options.logger.child({ component: "local-provisioner" });
  /** Per-tenant promise chains: one operation at a time per tenant. */
  const queues = new Map<string, Promise<unknown>>();
  /** Tenants with an `ensure` under way (observe says Starting rather than Failed for their gaps). */
  const ensuring = new Set<string>();
  /** Ports handed out in this process and not yet in a record (concurrent creations). */
  const reserved = new Set<number>();
  let defaultBinDir: Promise<string> | undefined;

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

  const pathsOf = (tenant: string): TenantPaths => {
    const dir = path.join(tenantsDir, checkTenantName(tenant));
    const clusterDir = path.join(dir, "clusters", localClusterName(tenant));
    return {
      dir,
      record: path.join(dir, "ring0.json"),
      config: path.join(dir, "kwok.yaml"),
      kubeconfig: path.join(dir, "kubeconfig"),
      clusterDir,
      clusterConfig: path.join(clusterDir, "kwok.yaml"),
      pki: path.join(clusterDir, "pki"),
    };
  };

  const readRecord = (paths: TenantPaths) => {
    const text = readText(paths.record);
    return text === undefined ? undefined : parseLocalRecord(text);
  };
  const writeRecord = (paths: TenantPaths, record: LocalControlPlaneRecord) =>
    writeAtomically(paths.record, `${JSON.stringify(record, null, 2)}\n`);

  const endpointOf = (record: LocalControlPlaneRecord) =>
    `https://127.0.0.1:${record.ports.kubeApiserverPort}`;

  const knownVersions = (): string[] =>
    options.versions ? sortVersionsNewestFirst(Object.keys(options.versions)) : availableVersions();

  const binariesOf = (): Promise<string> => {
    const configured = options.binDir ?? process.env.RING0_KUBE_BIN_DIR;
    if (configured) return Promise.resolve(path.resolve(configured));
    defaultBinDir ??= kubeBinaries(baseLog, { build: false }).catch((error: unknown) => {
      defaultBinDir = undefined;
      throw error;
    });
    return defaultBinDir;
  };

  const binDirFor = async (version: string): Promise<string> => {
    const binDir = options.versions?.[version] ?? (await binariesOf());
    if (!hasKwokctl(binDir)) {
      throw new Error(
        `the binaries for Kubernetes ${version} are missing (no kwokctl in ${binDir}): run \`npm run kube:build\``,
      );
    }
    return path.resolve(binDir);
  };

  /** The kwokctl to manage an existing cluster with: the one it was started with, while it exists. */
  const managingBinDir = async (record: LocalControlPlaneRecord | undefined): Promise<string | undefined> => {
    if (hasKwokctl(record?.binDir)) return record.binDir;
    try {
      return await binariesOf();
    } catch {
      return undefined;
    }
  };

  const kwokctl = (
    tenant: string,
    paths: TenantPaths,
    binDir: string,
    args: string[],
    timeoutMs: number,
    log: Logger,
  ) =>
    runKwokctl(
      { workDir: paths.dir, name: localClusterName(tenant), configPath: paths.config },
      binDir,
      args,
      {
        timeoutMs,
        logger: log,
      },
    );

  const writeConfig = (
    paths: TenantPaths,
    binDir: string,
    ports: LocalControlPlanePorts,
    flags: ComponentFlags = {},
  ) => {
    fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    writeAtomically(
      paths.config,
      renderKwokctlConfig({
        workDir: paths.dir,
        binDir,
        writer: "server/provisioners/local.ts",
        ports,
        flags,
      }),
    );
  };

  const vnAgentStateDir =
    options.vnAgentStateDir === false ? undefined : (options.vnAgentStateDir ?? stateDir);

  /**
   * The apiserver's kubelet client certificate (CN=<tenant>, O=ring0:tenant-apiserver) and the
   * vn-agent serving CA, written into the tenant's dir; re-issued when missing, expiring or from
   * another CA, and the admission configuration that presents the same certificate to Ring0's webhooks. Returns the kube-apiserver flags that use them (none without vn-agents).
   */
  const writeKubeletClient = async (tenant: string, paths: TenantPaths): Promise<Record<string, string>> => {
    if (!vnAgentStateDir) return {};
    const pki = await ensureVnAgentPki(vnAgentStateDir);
    const args = vnAgentKubeletArgs(paths.dir);
    const [cert, key, ca] = [
      args["kubelet-client-certificate"],
      args["kubelet-client-key"],
      args["kubelet-certificate-authority"],
    ] as [string, string, string];
    fs.mkdirSync(path.dirname(cert), { recursive: true, mode: 0o700 });
    const current = { cert: readText(cert) ?? "", key: readText(key) ?? "" };
    if (!current.cert || !current.key || !(await certificateStillGood(current, pki.clientCa))) {
      const issued = await pki.issueTenantKubeletClient(tenant);
      fs.writeFileSync(`${key}.tmp`, issued.key, { mode: 0o600 });
      fs.renameSync(`${key}.tmp`, key);
      writeAtomically(cert, issued.cert);
    }
    if (readText(ca) !== pki.servingCa.cert) writeAtomically(ca, pki.servingCa.cert);
    for (const [file, text] of Object.entries(admissionConfigFiles(paths.dir))) {
      if (readText(file) !== text) writeAtomically(file, text);
    }
    return { ...args, ...admissionConfigArgs(paths.dir) };
  };

  /**
   * Every flag a tenant's control plane runs with: kubelet requests through the vn-agents and the
   * walls of server/cluster/hardening.ts (etcd on TLS with client certificates on the recorded ports,
   * anonymous requests only on health endpoints, no open controller-manager metrics).
   */
  const wantedFlags = async (
    tenant: string,
    paths: TenantPaths,
    ports: LocalControlPlanePorts,
  ): Promise<ComponentFlags> =>
    mergeComponentFlags(
      { "kube-apiserver": await writeKubeletClient(tenant, paths) },
      etcdTlsFlags({ client: ports.etcdPort, peer: ports.etcdPeerPort }, await ensureEtcdPki(paths.dir)),
      onlyComponents(anonymousHealthOnlyFlags(writeAuthenticationConfiguration(paths.dir)), LOCAL_COMPONENTS),
    );

  /** Ports recorded by every tenant: a stopped tenant's ports stay its own. */
  const recordedPorts = (): Set<number> => {
    const ports = new Set<number>();
    for (const tenant of listTenantDirs()) {
      const record = readRecord(pathsOf(tenant));
      for (const port of Object.values(record?.ports ?? {})) ports.add(port);
    }
    return ports;
  };

  const pickPorts = async (): Promise<LocalControlPlanePorts> => {
    for (let attempt = 0; ; attempt++) {
      const ports = await freePortsFor(PORT_OPTIONS);
      const taken = recordedPorts();
      const values = Object.values(ports);
      if (attempt < 20 && values.some((port) => taken.has(port) || reserved.has(port))) continue;
      for (const port of values) reserved.add(port);
      return ports;
    }
  };
  const release = (ports: LocalControlPlanePorts) => {
    for (const port of Object.values(ports)) reserved.delete(port);
  };

  const componentStates = (paths: TenantPaths): Record<LocalComponent, ComponentState> => {
    const states = {} as Record<LocalComponent, ComponentState>;
    for (const component of LOCAL_COMPONENTS) {
      const pid = readText(path.join(paths.clusterDir, "pids", `${component}.pid`))?.trim();
      if (!pid || !/^\d+$/.test(pid)) {
        states[component] = "stopped";
        continue;
      }
      // The pid file may outlive its process (crash, reboot); a reused pid must mention our dir.
      const commandLine = readText(`/proc/${pid}/cmdline`);
      states[component] = commandLine?.includes(`${paths.clusterDir}/`) ? "running" : "exited";
    }
    return states;
  };

  /** Pids of the tenant's processes: from kwokctl's pid files and from /proc command lines. */
  const processesOf = (paths: TenantPaths): number[] => {
    const pids = new Set(processesMentioning(`${paths.dir}/`));
    for (const component of LOCAL_COMPONENTS) {
      const pid = Number(readText(path.join(paths.clusterDir, "pids", `${component}.pid`))?.trim());
      if (Number.isInteger(pid) && pid > 0 && componentStates(paths)[component] === "running") pids.add(pid);
    }
    return [...pids];
  };

  /** Remove whatever exists of a tenant's control plane: kwokctl's cluster, stray processes, files. */
  const removeAll = async (tenant: string, paths: TenantPaths, log: Logger) => {
    if (!fs.existsSync(paths.dir)) return;
    const binDir = await managingBinDir(readRecord(paths));
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
  };

  const create = async (
    tenant: string,
    paths: TenantPaths,
    version: string,
    binDir: string,
    log: Logger,
  ): Promise<LocalControlPlaneRecord> => {
    for (let attempt = 1; ; attempt++) {
      const ports = await pickPorts();
      try {
        fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
        writeConfig(paths, binDir, ports, await wantedFlags(tenant, paths, ports));
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
          await removeAll(tenant, paths, log);
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
        release(ports);
      }
    }
  };

  /** Stop the processes (kwokctl stop; data kept), then make sure none is left. */
  const stop = async (tenant: string, paths: TenantPaths, record: LocalControlPlaneRecord, log: Logger) => {
    const binDir = await managingBinDir(record);
    const pids = processesOf(paths);
    if (binDir) {
      await kwokctl(tenant, paths, binDir, ["stop", "cluster"], STOP_TIMEOUT_MS, log).catch(
        (error: unknown) => log.warn("kwokctl stop cluster failed; killing the processes", { error }),
      );
    }
    const killed = await killProcessesMentioning(`${paths.clusterDir}/`);
    if (killed.length > 0) log.warn("killed control plane processes kwokctl left running", { pids: killed });
    for (const component of LOCAL_COMPONENTS) {
      fs.rmSync(path.join(paths.clusterDir, "pids", `${component}.pid`), { force: true });
    }
    await waitExited(pids);
  };

  /** Rewrite a stopped cluster's saved config (and kubeconfigs) for other ports and/or binaries. */
  const retarget = (
    paths: TenantPaths,
    record: LocalControlPlaneRecord,
    next: { ports?: LocalControlPlanePorts; binDir?: string },
  ) => {
    const ports = next.ports ?? record.ports;
    const binDir = next.binDir ?? record.binDir;
    const moves = new Map(PORT_OPTIONS.map((option) => [record.ports[option], ports[option]]));
    for (const file of [
      paths.clusterConfig,
      path.join(paths.clusterDir, "kubeconfig.yaml"),
      paths.kubeconfig,
    ]) {
      const text = readText(file);
      if (text === undefined) continue;
      let updated = replacePorts(text, moves);
      if (binDir !== record.binDir) updated = replaceBinDir(updated, record.binDir, binDir);
      if (updated !== text) writeAtomically(file, updated);
    }
    // kwokctl runs components through links in clusters/<name>/bin.
    const links = path.join(paths.clusterDir, "bin");
    for (const entry of fs.existsSync(links) ? fs.readdirSync(links) : []) {
      const target = path.join(binDir, entry);
      if (!fs.existsSync(target)) continue;
      fs.rmSync(path.join(links, entry), { force: true });
      fs.symlinkSync(target, path.join(links, entry));
    }
    writeConfig(paths, binDir, ports);
  };

  const start = async (
    tenant: string,
    paths: TenantPaths,
    record: LocalControlPlaneRecord,
    log: Logger,
  ): Promise<LocalControlPlaneRecord> => {
    // kwokctl only warns (after minutes) when a component cannot bind: check the ports first.
    const busy: number[] = [];
    for (const port of Object.values(record.ports)) if (!(await isPortFree(port))) busy.push(port);
    let current = record;
    if (busy.length > 0) {
      const ports = await pickPorts();
      try {
        log.warn("recorded ports are taken by something else; moving the control plane to new ports", {
          busy,
          ports,
        });
        retarget(paths, current, { ports });
        current = { ...current, ports };
        writeRecord(paths, current);
      } finally {
        release(ports);
      }
    }
    current = { ...current, stopped: false };
    writeRecord(paths, current);
    log.info("starting the control plane", { version: current.version });
    await kwokctl(
      tenant,
      paths,
      current.binDir,
      ["start", "cluster", "--timeout", "2m"],
      START_TIMEOUT_MS,
      log,
    );
    return current;
  };

  const connectionOf = (tenant: string, access: ControlPlaneAccess) =>
    connectCluster(`tenant-${tenant}`, { inline: kubeconfigFromAccess(access, localClusterName(tenant)) });

  const readAccess = (paths: TenantPaths): ControlPlaneAccess | undefined => {
    const record = readRecord(paths);
    if (!record) return undefined;
    const ca = readText(path.join(paths.pki, "ca.crt"));
    const cert = readText(path.join(paths.pki, "admin.crt"));
    const key = readText(path.join(paths.pki, "admin.key"));
    if (!ca || !cert || !key) return undefined;
    return { server: endpointOf(record), ca, cert, key };
  };

  const observeNow = async (tenant: string): Promise<ControlPlaneObservation> => {
    const paths = pathsOf(tenant);
    if (!fs.existsSync(paths.dir)) return { phase: "Absent" };
    const record = readRecord(paths);
    if (!record || !fs.existsSync(paths.clusterConfig)) {
      if (ensuring.has(tenant)) return { phase: "Starting", message: "The control plane is being created." };
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
      if (ensuring.has(tenant))
        return { phase: "Starting", endpoint, message: "The control plane is being restarted." };
      const details = exited.map((component) => {
        const log = path.join(paths.clusterDir, "logs", `${component}.log`);
        const last = lastLogLine(log);
        return `${component} exited (see ${log}${last ? `; last line: ${last}` : ""})`;
      });
      return { phase: "Failed", endpoint, message: `${details.join("; ")}. Ensuring it again restarts it.` };
    }
    if (running.length === 0) {
      return {
        phase: "Stopped",
        endpoint,
        message: record.stopped
          ? "Suspended: no processes run; the data is kept."
          : ensuring.has(tenant)
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
  };

  const listTenantDirs = (): string[] => {
    try {
      return fs
        .readdirSync(tenantsDir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && entry.name.length <= 40 && TENANT_NAME.test(entry.name))
        .map((entry) => entry.name)
        .sort();
    } catch {
      return [];
    }
  };

  const ensureNow = async (spec: ControlPlaneSpec, version: string, signal?: AbortSignal) => {
    signal?.throwIfAborted();
    const { tenant } = spec;
    const log = baseLog.child({ tenant });
    const paths = pathsOf(tenant);
    const binDir = await binDirFor(version);
    let record = readRecord(paths);

    if (fs.existsSync(paths.dir) && (!record || !fs.existsSync(paths.clusterConfig))) {
      log.warn("removing a half-created control plane before creating it again", { dir: paths.dir });
      await removeAll(tenant, paths, log);
      record = undefined;
    }
    if (!record) {
      record = await create(tenant, paths, version, binDir, log);
      if (!spec.suspended) return observeNow(tenant);
    }

    // Same version on a rebuilt cache keeps its binaries while they exist; a new version moves.
    if (record.version !== version || !hasKwokctl(record.binDir)) {
      log.info("moving the control plane to another version", { from: record.version, to: version, binDir });
      await stop(tenant, paths, record, log);
      retarget(paths, record, { binDir });
      record = { ...record, version, binDir, stopped: true };
      writeRecord(paths, record);
    }

    const states = Object.values(componentStates(paths));
    if (spec.suspended) {
      if (!record.stopped || states.some((state) => state !== "stopped")) {
        log.info("stopping the control plane (suspended; data kept)");
        await stop(tenant, paths, record, log);
        record = { ...record, stopped: true };
        writeRecord(paths, record);
      }
      return observeNow(tenant);
    }

    // Control planes created before (the vn-agents, the walls, other certificates) get their flags
    // now: restarted with them.
    const savedConfig = readText(paths.clusterConfig) ?? "";
    const patched = withAllComponentFlags(savedConfig, await wantedFlags(tenant, paths, record.ports));
    if ("missing" in patched) {
      // Never started without its walls (plain-text etcd, anonymous access): a terminal refusal.
      if (states.some((state) => state !== "stopped")) await stop(tenant, paths, record, log);
      throw new ControlPlaneSpecError(
        `${paths.clusterConfig} has no ${patched.missing} component, so the control plane cannot be started behind its walls; delete the tenant's control plane (it is recreated) or restore that file`,
      );
    }
    if (patched.text !== savedConfig) {
      if (states.some((state) => state !== "stopped")) {
        log.info("restarting the control plane with its current flags (vn-agents, etcd TLS, authentication)");
        await stop(tenant, paths, record, log);
      }
      writeAtomically(paths.clusterConfig, patched.text);
      signal?.throwIfAborted();
      await start(tenant, paths, record, log);
      return observeNow(tenant);
    }
    closeKwokctlKeys(paths.pki);

    if (states.every((state) => state === "running")) {
      if (record.stopped) writeRecord(paths, { ...record, stopped: false });
      return observeNow(tenant);
    }
    // Stopped, or some components died: stop what is left, then start all with free ports.
    if (states.some((state) => state !== "stopped")) {
      log.warn("components exited; restarting the control plane", { states: componentStates(paths) });
      await stop(tenant, paths, record, log);
    }
    signal?.throwIfAborted();
    await start(tenant, paths, record, log);
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
        version = resolveVersion(spec.version, knownVersions());
      } catch (error) {
        return Promise.reject(error);
      }
      return serialise(tenant, async () => {
        ensuring.add(tenant);
        try {
          return await ensureNow({ ...spec, tenant }, version, signal);
        } finally {
          ensuring.delete(tenant);
        }
      });
    },

    async observe(tenant) {
      return observeNow(checkTenantName(tenant));
    },

    async access(tenant) {
      const paths = pathsOf(checkTenantName(tenant));
      return readAccess(paths);
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
        await removeAll(tenant, paths, log);
        log.info("control plane destroyed", { dir: paths.dir });
      });
    },

    async list() {
      return listTenantDirs();
    },
  };
}
