/**
 * The operators' isolation policy as configured (RING0_ISOLATION_POLICY): its rules, Pod Security
 * levels, defaults and parser. A leaf, so configuration (server/env.ts) can validate the policy
 * without importing the syncer; filter.ts enforces it on pods.
 */
import { allowListEntryProblem } from "./metadata";

/**
 * The Pod Security Standard level a tenant's pods are held to: "baseline" (the isolation filter's
 * rules), or "restricted" (baseline plus non-root users, all capabilities dropped, no privilege
 * escalation and a seccomp profile). The super namespaces carry the same level in their
 * `pod-security.kubernetes.io/*` labels.
 */
export type PodSecurityLevel = "baseline" | "restricted";

export interface IsolationPolicy {
  /** Rule ids that are enforced (all by default); operators may relax some. */
  enabled: IsolationRule[];
  /** Capabilities a container may add (default: a safe set such as NET_BIND_SERVICE). */
  allowedCapabilities: string[];
  /** Taint keys a tenant pod may tolerate (default: node.kubernetes.io/not-ready and /unreachable). */
  allowedTolerations: string[];
  /** The level pods are held to: the operator's default, or the tenant's own (Tenant spec.syncer.podSecurity). */
  podSecurity: PodSecurityLevel;
  /** Tenant namespace label keys copied onto the super namespace ("key" or "domain/*"); none by default. */
  namespaceLabels: string[];
  /** Tenant pod annotation keys copied onto the super pod ("key" or "domain/*"); none by default. */
  podAnnotations: string[];
  /**
   * The super cluster's RuntimeClasses a tenant pod may name in `runtimeClassName` (default: Ring0's
   * gVisor sandbox, `ring0-gvisor`): a tenant's class maps to the one of the same name below, and
   * only to these.
   */
  runtimeClasses: string[];
  /**
   * The runtime class of tenant pods that name none (the operator's default, or the tenant's own:
   * Tenant spec.syncer.runtimeClass); absent: the nodes' default runtime.
   */
  defaultRuntimeClass?: string;
  /**
   * The super cluster's StorageClasses a tenant's claims may name (default: Ring0's local volumes
   * on real nodes, `ring0-local`); the first is the tenants' default class. A claim naming another
   * class is refused below; an empty list leaves tenants without storage.
   */
  storageClasses: string[];
}

export type IsolationRule =
  | "privileged"
  | "hostNetwork"
  | "hostPID"
  | "hostIPC"
  | "hostPath"
  | "hostPort"
  | "capabilities"
  | "allowPrivilegeEscalation"
  | "procMount"
  | "sysctls"
  | "nodeName"
  | "appArmorProfile"
  | "seLinuxOptions"
  | "seccompProfile"
  | "windowsHostProcess"
  | "probeHost"
  | "volumes"
  | "tolerations"
  | "runAsNonRoot"
  | "runAsUser"
  | "runtimeClass";

export const isolationRules: readonly IsolationRule[] = [
  "privileged",
  "hostNetwork",
  "hostPID",
  "hostIPC",
  "hostPath",
  "hostPort",
  "capabilities",
  "allowPrivilegeEscalation",
  "procMount",
  "sysctls",
  "nodeName",
  "appArmorProfile",
  "seLinuxOptions",
  "seccompProfile",
  "windowsHostProcess",
  "probeHost",
  "volumes",
  "tolerations",
  "runAsNonRoot",
  "runAsUser",
  "runtimeClass",
];

export const podSecurityLevels: readonly PodSecurityLevel[] = ["baseline", "restricted"];

/** The only capability a container may add by default (as in the "restricted" Pod Security Standard). */
export const defaultAllowedCapabilities: readonly string[] = ["NET_BIND_SERVICE"];

/**
 * Taints every tenant pod may tolerate: Kubernetes' DefaultTolerationSeconds admission adds these
 * two (NoExecute, 300 s) to every pod, and tolerating them only delays eviction from a failed node.
 */
export const defaultAllowedTolerations: readonly string[] = [
  "node.kubernetes.io/not-ready",
  "node.kubernetes.io/unreachable",
];

/** Ring0's sandboxed runtime on real nodes (gVisor), a RuntimeClass of the super cluster. */
export const SANDBOX_RUNTIME_CLASS = "ring0-gvisor";

/** The runtime classes tenants may name by default: only a sandbox, which isolates more, never less. */
export const defaultRuntimeClasses: readonly string[] = [SANDBOX_RUNTIME_CLASS];

/** Ring0's local volumes on real nodes (server/cluster/real-node/volumes.ts), a StorageClass of the super cluster. */
export const LOCAL_STORAGE_CLASS = "ring0-local";
/** The provisioner name of that class. */
export const LOCAL_VOLUME_PROVISIONER = "ring0.dev/local-volume";

/** A RuntimeClass name (a DNS subdomain, as the API requires). */
export function isRuntimeClassName(name: string): boolean {
  return name.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name);
}

export function defaultIsolationPolicy(): IsolationPolicy {
  return {
    enabled: [...isolationRules],
    allowedCapabilities: [...defaultAllowedCapabilities],
    allowedTolerations: [...defaultAllowedTolerations],
    podSecurity: "baseline",
    namespaceLabels: [],
    podAnnotations: [],
    runtimeClasses: [...defaultRuntimeClasses],
    storageClasses: [LOCAL_STORAGE_CLASS],
  };
}

/** "cap_net_raw" and "NET_RAW" name the same capability. */
export function normalizeCapability(capability: string): string {
  return capability.trim().toUpperCase().replace(/^CAP_/, "");
}

/** A bad operator isolation policy; `field` names the offending field (e.g. "enabled[2]"). */
export class IsolationPolicyError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`isolation policy: ${field}: ${problem}`);
    this.name = "IsolationPolicyError";
  }
}

function stringList(value: unknown, field: string): string[] {
  if (!Array.isArray(value)) throw new IsolationPolicyError(field, "must be a list of strings");
  return value.map((entry, index) => {
    if (typeof entry !== "string" || entry.trim() === "") {
      throw new IsolationPolicyError(`${field}[${index}]`, "must be a non-empty string");
    }
    return entry;
  });
}

function ruleList(value: unknown, field: string): IsolationRule[] {
  return stringList(value, field).map((entry, index) => {
    if (!(isolationRules as readonly string[]).includes(entry)) {
      throw new IsolationPolicyError(
        `${field}[${index}]`,
        `unknown rule "${entry}" (rules: ${isolationRules.join(", ")})`,
      );
    }
    return entry as IsolationRule;
  });
}

function capabilityList(value: unknown, field: string): string[] {
  return stringList(value, field).map((capability, index) => {
    const name = normalizeCapability(capability);
    if (name === "ALL") {
      throw new IsolationPolicyError(
        `${field}[${index}]`,
        `"ALL" can never be allowed; list the capabilities tenants need one by one`,
      );
    }
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) {
      throw new IsolationPolicyError(
        `${field}[${index}]`,
        `"${capability}" is not a capability name (like NET_BIND_SERVICE)`,
      );
    }
    return name;
  });
}

/** Taint keys; an empty key would tolerate every taint, and stringList already refuses it. */
function taintKeyList(value: unknown, field: string): string[] {
  return stringList(value, field).map((key, index) => {
    if (!/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(key)) {
      throw new IsolationPolicyError(
        `${field}[${index}]`,
        `"${key}" is not a taint key (like node.kubernetes.io/not-ready)`,
      );
    }
    return key;
  });
}

/** RuntimeClass and StorageClass names (DNS subdomains); `example` says what one looks like. */
const classList = (kind: string, example: string) => (value: unknown, field: string) =>
  stringList(value, field).map((name, index) => {
    if (!isRuntimeClassName(name)) {
      throw new IsolationPolicyError(
        `${field}[${index}]`,
        `"${name}" is not a ${kind} name (like ${example})`,
      );
    }
    return name;
  });
const runtimeClassList = classList("RuntimeClass", SANDBOX_RUNTIME_CLASS);
const storageClassList = classList("StorageClass", LOCAL_STORAGE_CLASS);

function metadataAllowList(value: unknown, field: string): string[] {
  return stringList(value, field).map((entry, index) => {
    const problem = allowListEntryProblem(entry);
    if (problem) throw new IsolationPolicyError(`${field}[${index}]`, problem);
    return entry;
  });
}

const policyFields = [
  "enabled",
  "disabled",
  "allowedCapabilities",
  "allowedTolerations",
  "podSecurity",
  "namespaceLabels",
  "podAnnotations",
  "runtimeClasses",
  "defaultRuntimeClass",
  "storageClasses",
];

/**
 * An operator's isolation policy, as JSON text or an already parsed value:
 * `{ "enabled"?: rule[], "disabled"?: rule[], "allowedCapabilities"?: string[],
 *    "allowedTolerations"?: string[], "podSecurity"?: "baseline" | "restricted",
 *    "namespaceLabels"?: string[], "podAnnotations"?: string[], "runtimeClasses"?: string[],
 *    "defaultRuntimeClass"?: string, "storageClasses"?: string[] }`.
 * Omitted fields keep the defaults (every rule enforced, NET_BIND_SERVICE allowed, the not-ready
 * and unreachable tolerations allowed, baseline, no tenant namespace label or pod annotation
 * below, the gVisor sandbox as the only runtime class, none by default, Ring0's local volumes as the only
 * storage class); `disabled` removes rules from `enabled`. Unknown fields are errors, so a misspelt
 * setting is not silently ignored. Throws IsolationPolicyError naming the bad field.
 */
export function parseIsolationPolicy(json: unknown): IsolationPolicy {
  let value = json;
  if (typeof json === "string") {
    try {
      value = JSON.parse(json);
    } catch (error) {
      throw new IsolationPolicyError("(document)", `is not valid JSON: ${(error as Error).message}`);
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new IsolationPolicyError("(document)", "must be a JSON object");
  }
  const input = value as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!policyFields.includes(key)) {
      throw new IsolationPolicyError(key, `unknown field (fields: ${policyFields.join(", ")})`);
    }
  }
  const defaults = defaultIsolationPolicy();
  const enabled = input.enabled === undefined ? defaults.enabled : ruleList(input.enabled, "enabled");
  const disabled = new Set(input.disabled === undefined ? [] : ruleList(input.disabled, "disabled"));
  if (input.podSecurity !== undefined && !podSecurityLevels.includes(input.podSecurity as PodSecurityLevel)) {
    throw new IsolationPolicyError("podSecurity", `must be one of ${podSecurityLevels.join(", ")}`);
  }
  const optional = <T>(field: string, read: (value: unknown, field: string) => T[], fallback: T[]) =>
    input[field] === undefined ? fallback : [...new Set(read(input[field], field))];
  const runtimeClasses = optional("runtimeClasses", runtimeClassList, defaults.runtimeClasses);
  const defaultRuntimeClass = input.defaultRuntimeClass;
  if (defaultRuntimeClass !== undefined && !runtimeClasses.includes(defaultRuntimeClass as string)) {
    throw new IsolationPolicyError(
      "defaultRuntimeClass",
      `must be one of runtimeClasses (${runtimeClasses.join(", ") || "none"})`,
    );
  }
  return {
    enabled: [...new Set(enabled)].filter((rule) => !disabled.has(rule)),
    allowedCapabilities: optional("allowedCapabilities", capabilityList, defaults.allowedCapabilities),
    allowedTolerations: optional("allowedTolerations", taintKeyList, defaults.allowedTolerations),
    podSecurity: (input.podSecurity as PodSecurityLevel | undefined) ?? defaults.podSecurity,
    namespaceLabels: optional("namespaceLabels", metadataAllowList, defaults.namespaceLabels),
    podAnnotations: optional("podAnnotations", metadataAllowList, defaults.podAnnotations),
    runtimeClasses,
    storageClasses: optional("storageClasses", storageClassList, defaults.storageClasses),
    ...(defaultRuntimeClass !== undefined ? { defaultRuntimeClass: defaultRuntimeClass as string } : {}),
  };
}
