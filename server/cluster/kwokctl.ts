/**
 * What every kwokctl cluster Ring0 runs shares — the local super cluster (./local.ts) and the local
 * tenant control planes (server/provisioners/local.ts): the Kubernetes binaries, kwokctl's isolated
 * environment, the KwokctlConfiguration Ring0 writes (every binary explicit, so nothing downloads),
 * free ports on 127.0.0.1 and finding processes by the work dir in their command line.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import type { Logger } from "@/server/logger";
import { CommandError, type RunResult, run } from "./process";

const BUILD_TIMEOUT_MS = 90 * 60_000;

function repoRoot(): string {
  return process.cwd();
}

/** The bin dir of scripts/kube-build.sh, building when allowed; progress goes to the logger. */
export async function kubeBinaries(logger: Logger, options: { build?: boolean } = {}): Promise<string> {
  const script = path.join(repoRoot(), "scripts", "kube-build.sh");
  try {
    const printed = await run("bash", [script, "--print-dir"], { timeoutMs: 60_000 });
    return printed.stdout.trim().split("\n").pop() ?? "";
  } catch (error) {
    if (!(error instanceof CommandError) || error.result.code !== 3) throw error;
    if (options.build === false) {
      throw new Error(`Kubernetes binaries are not built yet: run \`npm run kube:build\` (${script})`);
    }
  }
  logger.info("building Kubernetes binaries with scripts/kube-build.sh (many minutes when cold)");
  const built = await run("bash", [script], {
    timeoutMs: BUILD_TIMEOUT_MS,
    onLine: (line) => logger.info(line, { component: "kube-build" }),
  });
  const binDir = built.stdout.trim().split("\n").pop() ?? "";
  if (!binDir || !fs.existsSync(binDir))
    throw new Error(`scripts/kube-build.sh did not print a bin dir (got "${binDir}")`);
  return binDir;
}

/** kwokctl's per-component port options (KwokctlConfiguration `options.<name>Port`). */
export type KwokctlPortOption =
  | "kubeApiserverPort"
  | "etcdPort"
  | "etcdPeerPort"
  | "kubeControllerManagerPort"
  | "kubeSchedulerPort"
  | "kwokControllerPort";

export type KwokctlPorts = Partial<Record<KwokctlPortOption, number>>;

/** Lowest port Ring0 hands to a component it starts (below it: well-known and registered services). */
const LISTEN_PORT_FLOOR = 10_000;
const LISTEN_PORT_TRIES = 200;

/** The kernel's ephemeral range, `[low, high]`: outgoing connections take their local port from it. */
export function ephemeralPortRange(
  read: () => string = () => fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8"),
): [number, number] | null {
  try {
    const [low = Number.NaN, high = Number.NaN] = read().trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low > 0 && low <= high && high < 65536)
      return [low, high];
  } catch {
    // Not Linux, or /proc is not mounted: the kernel picks (port 0).
  }
  return null;
}

/**
 * Where to look for ports a component will listen on later: below the ephemeral range. A port the
 * kernel hands out for `:0` lies inside it, so between picking and binding, any outgoing connection
 * on the machine (ten control planes starting at once make thousands) may take it and the component
 * then exits with "address already in use". Below the range only listeners compete, and binding
 * first tells whether one holds the port. Null when that window is too small to pick from.
 */
export function listenPortWindow(range = ephemeralPortRange()): [number, number] | null {
  if (!range) return null;
  const high = range[0] - 1;
  return high - LISTEN_PORT_FLOOR >= 1_000 ? [LISTEN_PORT_FLOOR, high] : null;
}

function listenOn(port: number): Promise<net.Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", (error: NodeJS.ErrnoException) =>
      port !== 0 && (error.code === "EADDRINUSE" || error.code === "EACCES")
        ? resolve(undefined)
        : reject(error),
    );
    server.listen({ host: "127.0.0.1", port, exclusive: true }, () => resolve(server));
  });
}

/**
 * Free ports on 127.0.0.1 for components to listen on, held open together so they are distinct,
 * then released. Taken from below the ephemeral range when there is room ({@link listenPortWindow}),
 * else from the kernel.
 */
export async function freeLoopbackPorts(count: number, window = listenPortWindow()): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let tries = 0; window && servers.length < count && tries < LISTEN_PORT_TRIES; tries++) {
      const port = window[0] + Math.floor(Math.random() * (window[1] - window[0] + 1));
      const server = await listenOn(port);
      if (server) servers.push(server);
    }
    while (servers.length < count) servers.push((await listenOn(0)) as net.Server);
    return servers.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** A free port on 127.0.0.1 for each named option. */
export async function freePortsFor<K extends KwokctlPortOption>(
  options: readonly K[],
): Promise<Record<K, number>> {
  const ports = await freeLoopbackPorts(options.length);
  return Object.fromEntries(options.map((option, index) => [option, ports[index]])) as Record<K, number>;
}

export async function isPortFree(port: number): Promise<boolean> {
  const server = await listenOn(port).catch(() => undefined);
  if (!server) return false;
  await new Promise((resolve) => server.close(resolve));
  return true;
}

/** True when something accepts connections on 127.0.0.1:`port`. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.setTimeout(2_000, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Poll `probe` every 250 ms until it yields a value; throws naming `what` after `timeoutMs`. */
export async function until<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const detail = lastError instanceof Error ? `: ${lastError.message}` : "";
  throw new Error(`${what} did not happen within ${Math.round(timeoutMs / 1000)} s${detail}`);
}

/**
 * kwokctl and everything it forks get this environment and nothing else from ours: no host secrets
 * reach simulated containers, and kwokctl reads only its own config under its work dir.
 */
export function kwokctlEnv(workDir: string, binDir: string): Record<string, string> {
  return {
    PATH: `${binDir}:/usr/local/bin:/usr/bin:/bin`,
    HOME: path.join(workDir, "home"),
    TMPDIR: path.join(workDir, "tmp"),
    KWOK_WORKDIR: workDir,
    KWOK_RUNTIME: "binary",
    KWOK_KUBE_BINARY_PREFIX: binDir,
    KWOK_BINARY_PREFIX: binDir,
    KWOK_KUBECTL_BINARY: path.join(binDir, "kubectl"),
    LANG: "C.UTF-8",
  };
}

export interface KwokctlCluster {
  /** kwokctl's work dir (KWOK_WORKDIR). */
  workDir: string;
  /** Cluster name (`--name`). */
  name: string;
  /** The KwokctlConfiguration passed as `--config`. */
  configPath: string;
}

/** Run `kwokctl --name <name> --config <config> args…` from `binDir` in the cluster's isolated env. */
export async function runKwokctl(
  cluster: KwokctlCluster,
  binDir: string,
  args: string[],
  options: { timeoutMs: number; logger: Logger },
): Promise<RunResult> {
  fs.mkdirSync(path.join(cluster.workDir, "home"), { recursive: true });
  fs.mkdirSync(path.join(cluster.workDir, "tmp"), { recursive: true });
  return run(
    path.join(binDir, "kwokctl"),
    ["--name", cluster.name, "--config", cluster.configPath, ...args],
    {
      env: kwokctlEnv(cluster.workDir, binDir),
      cwd: cluster.workDir,
      timeoutMs: options.timeoutMs,
      onLine: (line) => options.logger.debug(line, { component: "kwokctl" }),
    },
  );
}

export interface KwokctlConfigOptions {
  workDir: string;
  binDir: string;
  /** Who writes it (for the header comment). */
  writer: string;
  ports?: KwokctlPorts;
  /** kwok CRDs to enable (`options.enableCRDs`). */
  enableCRDs?: string[];
  /** Flags to set on components (`componentsPatches`): kwokctl's own value replaced, or the flag added. */
  flags?: ComponentFlags;
}

/** The processes of a kwokctl cluster, by kwokctl's names (also their pid and log file names). */
export type KwokComponent =
  | "etcd"
  | "kube-apiserver"
  | "kube-controller-manager"
  | "kube-scheduler"
  | "kwok-controller";

/** Flags (name without "--" → value) to set per component. */
export type ComponentFlags = Partial<Record<KwokComponent, Record<string, string>>>;

/**
 * The flags kwokctl v0.8.0 itself sets on the binary runtime (secure port on). Setting one of these
 * must replace kwokctl's value (an `override` patch): a second occurrence would be appended to list
 * flags such as --etcd-servers instead of replacing them. Any other flag is added.
 */
const SET_BY_KWOKCTL: Record<KwokComponent, ReadonlySet<string>> = {
  etcd: new Set([
    "name",
    "auto-compaction-retention",
    "quota-backend-bytes",
    "data-dir",
    "initial-advertise-peer-urls",
    "listen-peer-urls",
    "advertise-client-urls",
    "listen-client-urls",
    "initial-cluster",
  ]),
  "kube-apiserver": new Set([
    "etcd-prefix",
    "allow-privileged",
    "etcd-servers",
    "authorization-mode",
    "bind-address",
    "secure-port",
    "tls-cert-file",
    "tls-private-key-file",
    "client-ca-file",
    "service-account-key-file",
    "service-account-signing-key-file",
    "service-account-issuer",
    "proxy-client-key-file",
    "proxy-client-cert-file",
  ]),
  "kube-controller-manager": new Set([
    "node-monitor-period",
    "node-monitor-grace-period",
    "kubeconfig",
    "authorization-always-allow-paths",
    "bind-address",
    "secure-port",
    "root-ca-file",
    "service-account-private-key-file",
  ]),
  "kube-scheduler": new Set([
    "kubeconfig",
    "authorization-always-allow-paths",
    "bind-address",
    "secure-port",
  ]),
  "kwok-controller": new Set([
    "manage-all-nodes",
    "kubeconfig",
    "config",
    "tls-cert-file",
    "tls-private-key-file",
    "node-ip",
    "node-name",
    "node-port",
    "server-address",
    "node-lease-duration-seconds",
    "enable-crds",
  ]),
};

/** Merge flag sets: later ones win per flag. */
export function mergeComponentFlags(...sets: ComponentFlags[]): ComponentFlags {
  const merged: ComponentFlags = {};
  for (const set of sets) {
    for (const [component, flags] of Object.entries(set) as [KwokComponent, Record<string, string>][]) {
      merged[component] = { ...merged[component], ...flags };
    }
  }
  return merged;
}

/** `componentsPatches` of a KwokctlConfiguration for `flags`, as YAML lines. */
export function renderComponentPatches(flags: ComponentFlags): string[] {
  const components = Object.entries(flags).filter(([, set]) => set && Object.keys(set).length > 0) as [
    KwokComponent,
    Record<string, string>,
  ][];
  if (components.length === 0) return [];
  const lines = ["componentsPatches:"];
  for (const [component, set] of components) {
    lines.push(`  - name: ${component}`, "    extraArgs:");
    for (const [key, value] of Object.entries(set)) {
      lines.push(
        `      - key: ${JSON.stringify(key)}`,
        `        value: ${JSON.stringify(value)}`,
        `        override: ${SET_BY_KWOKCTL[component].has(key)}`,
      );
    }
  }
  return lines;
}

/** The KwokctlConfiguration Ring0 writes: binary runtime, 127.0.0.1, every binary path explicit. */
export function renderKwokctlConfig(options: KwokctlConfigOptions): string {
  const bin = (file: string) => JSON.stringify(path.join(options.binDir, file));
  const lines = [
    `# Written by Ring0 (${options.writer}); edits are overwritten.`,
    "apiVersion: config.kwok.x-k8s.io/v1alpha1",
    "kind: KwokctlConfiguration",
    "options:",
    "  runtime: binary",
    "  bindAddress: 127.0.0.1",
    `  cacheDir: ${JSON.stringify(path.join(options.workDir, "cache"))}`,
    `  kubeApiserverBinary: ${bin("kube-apiserver")}`,
    `  kubeControllerManagerBinary: ${bin("kube-controller-manager")}`,
    `  kubeSchedulerBinary: ${bin("kube-scheduler")}`,
    `  kwokControllerBinary: ${bin("kwok")}`,
    `  etcdBinary: ${bin("etcd")}`,
    `  etcdctlBinary: ${bin("etcdctl")}`,
    `  etcdutlBinary: ${bin("etcdutl")}`,
    `  kubectlBinary: ${bin("kubectl")}`,
    `  kectlBinary: ${bin("kectl")}`,
    "  quietPull: true",
    ...(options.enableCRDs?.length ? [`  enableCRDs: [${options.enableCRDs.join(", ")}]`] : []),
    ...Object.entries(options.ports ?? {}).map(([key, port]) => `  ${key}: ${port}`),
    ...renderComponentPatches(options.flags ?? {}),
    "",
  ];
  return lines.join("\n");
}

/** PIDs of processes (other than this one) whose command line mentions `needle`. */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const commandLine = fs.readFileSync(path.join("/proc", entry, "cmdline"), "utf8");
      if (commandLine.includes(needle)) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/**
 * True once `pid` has let go of its files and sockets: gone, or a zombie without live threads. (A
 * dying process loses its command line before it closes its sockets, so an empty cmdline is not enough.)
 */
export function hasExited(pid: number): boolean {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return true;
  }
  const state = /^State:\s+(\S)/m.exec(status)?.[1];
  const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? "1");
  return (state === "Z" || state === "X") && threads <= 1;
}

/** Wait until every pid has exited (see `hasExited`). */
export async function waitExited(pids: number[], timeoutMs = 10_000): Promise<void> {
  if (pids.length === 0) return;
  await until(`processes ${pids.join(", ")} exiting`, timeoutMs, async () =>
    pids.every(hasExited) ? true : undefined,
  );
}

/** SIGKILL every process mentioning `needle` and wait until they have exited; returns the pids killed. */
export async function killProcessesMentioning(needle: string, timeoutMs = 10_000): Promise<number[]> {
  const killed = processesMentioning(needle);
  for (const pid of killed) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await waitExited(killed, timeoutMs);
  return killed;
}

function yamlScalar(value: string): string {
  return /^[A-Za-z0-9_./=:-]+$/.test(value) ? value : JSON.stringify(value);
}

/** The lines of one component's item in kwokctl's saved cluster config, and where its args list is. */
function findComponent(lines: string[], component: KwokComponent) {
  const start = lines.indexOf("components:");
  if (start === -1) return undefined;
  // Components are the "- " items at column 0 until the next top-level key.
  let end = start + 1;
  while (end < lines.length && (lines[end]?.startsWith("- ") || lines[end]?.startsWith("  "))) end++;
  let itemStart = -1;
  for (let index = start + 1; index <= end; index++) {
    const line = lines[index] ?? "";
    if (index === end || line.startsWith("- ")) {
      if (itemStart !== -1 && lines.slice(itemStart, index).includes(`  name: ${component}`)) {
        const item = lines.slice(itemStart, index);
        const argsAt = item.findIndex((candidate) => candidate === "- args:" || candidate === "  args:");
        if (argsAt === -1) return undefined;
        let argsEnd = argsAt + 1;
        while (argsEnd < item.length && item[argsEnd]?.startsWith("  - ")) argsEnd++;
        return { itemStart, itemEnd: index, item, argsAt, argsEnd };
      }
      itemStart = index;
    }
  }
  return undefined;
}

function unquoteArg(line: string): string {
  const text = line.replace(/^ {2}- /, "");
  if (text.startsWith('"')) {
    try {
      return JSON.parse(text) as string;
    } catch {
      return text;
    }
  }
  return text;
}

/** A component's flags in kwokctl's saved cluster config (`clusters/<name>/kwok.yaml`); undefined when it is not there. */
export function componentFlagsOf(text: string, component: KwokComponent): Map<string, string> | undefined {
  const found = findComponent(text.split("\n"), component);
  if (!found) return undefined;
  const flags = new Map<string, string>();
  for (const line of found.item.slice(found.argsAt + 1, found.argsEnd)) {
    const match = /^--([^=]+)(?:=(.*))?$/s.exec(unquoteArg(line));
    if (match?.[1]) flags.set(match[1], match[2] ?? "");
  }
  return flags;
}

/**
 * kwokctl's saved cluster config with `flags` set on `component`: an existing flag of the same name
 * is replaced, a missing one appended to its args. Unchanged text when every flag is already so;
 * undefined when the component or its args list is not found (the config is not what kwokctl writes).
 */
export function withComponentFlags(
  text: string,
  component: KwokComponent,
  flags: Record<string, string>,
): string | undefined {
  const lines = text.split("\n");
  const found = findComponent(lines, component);
  if (!found) return undefined;
  const current = componentFlagsOf(text, component) ?? new Map();
  if (Object.entries(flags).every(([name, value]) => current.get(name) === value)) return text;
  const names = Object.keys(flags);
  const kept = found.item
    .slice(found.argsAt + 1, found.argsEnd)
    .filter(
      (line) =>
        !names.some((name) => unquoteArg(line).startsWith(`--${name}=`) || unquoteArg(line) === `--${name}`),
    );
  const added = Object.entries(flags).map(([name, value]) => `  - ${yamlScalar(`--${name}=${value}`)}`);
  const patched = [
    ...found.item.slice(0, found.argsAt + 1),
    ...kept,
    ...added,
    ...found.item.slice(found.argsEnd),
  ];
  return [...lines.slice(0, found.itemStart), ...patched, ...lines.slice(found.itemEnd)].join("\n");
}

/** `withComponentFlags` for every component in `flags`; undefined names the first component missing. */
export function withAllComponentFlags(
  text: string,
  flags: ComponentFlags,
): { text: string } | { missing: KwokComponent } {
  let current = text;
  for (const [component, set] of Object.entries(flags) as [KwokComponent, Record<string, string>][]) {
    const next = withComponentFlags(current, component, set);
    if (next === undefined) return { missing: component };
    current = next;
  }
  return { text: current };
}
