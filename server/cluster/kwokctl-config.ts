/**
 * The KwokctlConfiguration Ring0 writes for every kwokctl cluster it runs (every binary explicit, so
 * nothing downloads; 127.0.0.1; ports and component flags chosen by Ring0), and the edits Ring0
 * makes to kwokctl's saved cluster config (`clusters/<name>/kwok.yaml`) of a cluster made before:
 * reading and setting a component's flags.
 */
import path from "node:path";

/** kwokctl's per-component port options (KwokctlConfiguration `options.<name>Port`). */
export type KwokctlPortOption =
  | "kubeApiserverPort"
  | "etcdPort"
  | "etcdPeerPort"
  | "kubeControllerManagerPort"
  | "kubeSchedulerPort"
  | "kwokControllerPort";

export type KwokctlPorts = Partial<Record<KwokctlPortOption, number>>;

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
  /** Environment variables to set on components (`componentsPatches[].extraEnvs`), e.g. GOGC. */
  envs?: ComponentEnvs;
  /** Extra names in the API server's certificate (`options.kubeApiserverCertSANs`; used when its PKI is made). */
  certSans?: string[];
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

/** Environment variables (name → value) to set per component. */
export type ComponentEnvs = Partial<Record<KwokComponent, Record<string, string>>>;

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

/** `componentsPatches` of a KwokctlConfiguration for `flags` and `envs`, as YAML lines. */
export function renderComponentPatches(flags: ComponentFlags, envs: ComponentEnvs = {}): string[] {
  const nonEmpty = (set: Record<string, string> | undefined) => set && Object.keys(set).length > 0;
  const components = [...new Set([...Object.keys(flags), ...Object.keys(envs)])].filter(
    (component) => nonEmpty(flags[component as KwokComponent]) || nonEmpty(envs[component as KwokComponent]),
  ) as KwokComponent[];
  if (components.length === 0) return [];
  const lines = ["componentsPatches:"];
  for (const component of components) {
    lines.push(`  - name: ${component}`);
    const set = flags[component] ?? {};
    if (nonEmpty(set)) lines.push("    extraArgs:");
    for (const [key, value] of Object.entries(set)) {
      lines.push(
        `      - key: ${JSON.stringify(key)}`,
        `        value: ${JSON.stringify(value)}`,
        `        override: ${SET_BY_KWOKCTL[component].has(key)}`,
      );
    }
    const variables = envs[component] ?? {};
    if (nonEmpty(variables)) lines.push("    extraEnvs:");
    for (const [name, value] of Object.entries(variables)) {
      lines.push(`      - name: ${JSON.stringify(name)}`, `        value: ${JSON.stringify(value)}`);
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
    ...(options.certSans?.length
      ? [`  kubeApiserverCertSANs: [${options.certSans.map((name) => JSON.stringify(name)).join(", ")}]`]
      : []),
    ...Object.entries(options.ports ?? {}).map(([key, port]) => `  ${key}: ${port}`),
    ...renderComponentPatches(options.flags ?? {}, options.envs ?? {}),
    "",
  ];
  return lines.join("\n");
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
  return unquoteScalar(line.replace(/^ {2}- /, ""));
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
  return withEveryComponent(text, flags, withComponentFlags);
}

/** `patch` applied for every component in `sets`, in turn; the first component missing is named. */
function withEveryComponent(
  text: string,
  sets: Partial<Record<KwokComponent, Record<string, string>>>,
  patch: (text: string, component: KwokComponent, set: Record<string, string>) => string | undefined,
): { text: string } | { missing: KwokComponent } {
  let current = text;
  for (const [component, set] of Object.entries(sets) as [KwokComponent, Record<string, string>][]) {
    const next = patch(current, component, set);
    if (next === undefined) return { missing: component };
    current = next;
  }
  return { text: current };
}

/** A component's environment in kwokctl's saved cluster config (its `envs:` list). */
function envsOfItem(item: string[]): { at: number; end: number; envs: Map<string, string> } | undefined {
  const at = item.indexOf("  envs:");
  if (at === -1) return undefined;
  const envs = new Map<string, string>();
  let end = at + 1;
  let name: string | undefined;
  for (; end < item.length; end++) {
    const line = item[end] ?? "";
    const nameMatch = /^ {2}- name: (.*)$/.exec(line);
    const valueMatch = /^ {4}value: (.*)$/.exec(line);
    if (nameMatch) name = unquoteScalar(nameMatch[1] ?? "");
    else if (valueMatch && name !== undefined) envs.set(name, unquoteScalar(valueMatch[1] ?? ""));
    else break;
  }
  return { at, end, envs };
}

function unquoteScalar(text: string): string {
  if (!text.startsWith('"')) return text;
  try {
    return JSON.parse(text) as string;
  } catch {
    return text;
  }
}

/**
 * kwokctl's saved cluster config with environment variables `envs` set on `component` (others it
 * has kept). Unchanged text when every variable is already so; undefined when the component is not
 * found.
 */
export function withComponentEnvs(
  text: string,
  component: KwokComponent,
  envs: Record<string, string>,
): string | undefined {
  const lines = text.split("\n");
  const found = findComponent(lines, component);
  if (!found) return undefined;
  const current = envsOfItem(found.item);
  if (Object.entries(envs).every(([name, value]) => current?.envs.get(name) === value)) return text;
  const merged = new Map([...(current?.envs ?? []), ...Object.entries(envs)]);
  const block = [
    "  envs:",
    ...[...merged].flatMap(([name, value]) => [
      `  - name: ${yamlScalar(name)}`,
      `    value: ${JSON.stringify(value)}`,
    ]),
  ];
  const item = current
    ? [...found.item.slice(0, current.at), ...block, ...found.item.slice(current.end)]
    : [...found.item, ...block];
  return [...lines.slice(0, found.itemStart), ...item, ...lines.slice(found.itemEnd)].join("\n");
}

/** `withComponentEnvs` for every component in `envs`; undefined names the first component missing. */
export function withAllComponentEnvs(
  text: string,
  envs: ComponentEnvs,
): { text: string } | { missing: KwokComponent } {
  return withEveryComponent(text, envs, withComponentEnvs);
}
