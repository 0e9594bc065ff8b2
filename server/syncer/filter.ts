/**
 * The isolation filter (issue 5): a tenant pod that could escape onto the shared super-cluster node
 * never reaches the super cluster. `checkPodIsolation` lists every violation (rule, JSON field path,
 * one sentence for the tenant) so the syncer can reject the pod with an event and a condition that
 * say what to change. Operators may relax rules and widen the allowed capabilities through
 * `parseIsolationPolicy`.
 *
 * The check is of the pod as the tenant wrote it: the "nodeName" rule refuses a pod that pins a
 * node, so the syncer must check a pod before it binds the pod to a vNode itself, not afterwards.
 * Tenant input is untrusted and may be malformed, so every field is read defensively.
 */
import type { V1Pod } from "@/server/k8s/nodes";
import type { CheckPodIsolation, IsolationPolicy, IsolationRule, IsolationViolation } from "./contracts";

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
];

/** The only capability a container may add by default (as in the "restricted" Pod Security Standard). */
export const defaultAllowedCapabilities: readonly string[] = ["NET_BIND_SERVICE"];

/** Kubernetes' "safe" sysctls: namespaced per pod, so they cannot affect other pods on the node. */
export const safeSysctls: ReadonlySet<string> = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_rmem",
  "net.ipv4.tcp_wmem",
]);

export function defaultIsolationPolicy(): IsolationPolicy {
  return { enabled: [...isolationRules], allowedCapabilities: [...defaultAllowedCapabilities] };
}

/** "cap_net_raw" and "NET_RAW" name the same capability. */
function normalizeCapability(capability: string): string {
  return capability.trim().toUpperCase().replace(/^CAP_/, "");
}

/** Kubernetes accepts "net/ipv4/tcp_syncookies" for "net.ipv4.tcp_syncookies" (slash-separated form). */
function normalizeSysctl(name: string): string {
  const slash = name.indexOf("/");
  const dot = name.indexOf(".");
  if (slash === -1 || (dot !== -1 && dot < slash)) return name;
  return name.replace(/[./]/g, (separator) => (separator === "/" ? "." : "/"));
}

function list<T>(value: T[] | undefined | null): T[] {
  return Array.isArray(value) ? value : [];
}

interface ContainerLike {
  name?: string;
  ports?: { hostPort?: number }[];
  securityContext?: {
    privileged?: boolean;
    allowPrivilegeEscalation?: boolean;
    procMount?: string;
    capabilities?: { add?: string[] };
  };
}

const containerKinds = [
  { field: "containers", noun: "Container" },
  { field: "initContainers", noun: "Init container" },
  { field: "ephemeralContainers", noun: "Ephemeral container" },
] as const;

export const checkPodIsolation: CheckPodIsolation = (pod: V1Pod, policy: IsolationPolicy) => {
  const enabled = new Set(policy.enabled);
  const allowedCapabilities = new Set(policy.allowedCapabilities.map(normalizeCapability));
  const violations: IsolationViolation[] = [];
  const report = (rule: IsolationRule, field: string, message: string) => {
    if (enabled.has(rule)) violations.push({ rule, field, message });
  };
  const spec = pod?.spec;
  if (!spec || typeof spec !== "object") return violations;

  if (spec.hostNetwork === true) {
    report(
      "hostNetwork",
      "spec.hostNetwork",
      "The pod asks for the node's network namespace (hostNetwork), which would expose other tenants' traffic; remove spec.hostNetwork.",
    );
  }
  if (spec.hostPID === true) {
    report(
      "hostPID",
      "spec.hostPID",
      "The pod asks to see the node's processes (hostPID), which include other tenants' containers; remove spec.hostPID.",
    );
  }
  if (spec.hostIPC === true) {
    report(
      "hostIPC",
      "spec.hostIPC",
      "The pod asks for the node's IPC namespace (hostIPC), which is shared with other tenants; remove spec.hostIPC.",
    );
  }
  if (typeof spec.nodeName === "string" && spec.nodeName !== "") {
    report(
      "nodeName",
      "spec.nodeName",
      `The pod pins node "${spec.nodeName}", but nodes of the shared cluster are chosen by its scheduler; remove spec.nodeName (use a nodeSelector on your virtual nodes' labels instead).`,
    );
  }
  list(spec.volumes).forEach((volume, index) => {
    if (volume?.hostPath) {
      report(
        "hostPath",
        `spec.volumes[${index}].hostPath`,
        `Volume "${volume.name ?? index}" mounts a path of the shared node (hostPath); use an emptyDir, configMap, secret or persistentVolumeClaim volume instead.`,
      );
    }
  });
  list(spec.securityContext?.sysctls).forEach((sysctl, index) => {
    const name = typeof sysctl?.name === "string" ? sysctl.name : "";
    if (!safeSysctls.has(normalizeSysctl(name))) {
      report(
        "sysctls",
        `spec.securityContext.sysctls[${index}].name`,
        `Sysctl "${name}" is not in Kubernetes' safe set and could change the shared node's kernel for other tenants; remove it or use a safe sysctl.`,
      );
    }
  });

  for (const kind of containerKinds) {
    list(spec[kind.field] as ContainerLike[] | undefined).forEach((container, index) => {
      const at = `spec.${kind.field}[${index}]`;
      const who = `${kind.noun} "${container?.name ?? index}"`;
      const context = container?.securityContext;
      if (context?.privileged === true) {
        report(
          "privileged",
          `${at}.securityContext.privileged`,
          `${who} asks for privileged mode, which gives it full control of the shared node; remove securityContext.privileged.`,
        );
      }
      if (context?.allowPrivilegeEscalation === true) {
        report(
          "allowPrivilegeEscalation",
          `${at}.securityContext.allowPrivilegeEscalation`,
          `${who} allows privilege escalation (setuid binaries can gain more rights than it was given); set securityContext.allowPrivilegeEscalation to false or remove it.`,
        );
      }
      if (typeof context?.procMount === "string" && context.procMount !== "Default") {
        report(
          "procMount",
          `${at}.securityContext.procMount`,
          `${who} asks for an unmasked /proc (procMount "${context.procMount}"), which exposes the shared node's kernel interfaces; remove securityContext.procMount.`,
        );
      }
      list(context?.capabilities?.add).forEach((capability, capabilityIndex) => {
        const name = typeof capability === "string" ? normalizeCapability(capability) : "";
        if (name === "ALL" || !allowedCapabilities.has(name)) {
          const allowed = [...allowedCapabilities].filter((allowedName) => allowedName !== "ALL");
          report(
            "capabilities",
            `${at}.securityContext.capabilities.add[${capabilityIndex}]`,
            `${who} adds capability "${capability}", which is not allowed on the shared nodes; remove it (allowed: ${allowed.length ? allowed.join(", ") : "none"}).`,
          );
        }
      });
      list(container?.ports).forEach((port, portIndex) => {
        if (typeof port?.hostPort === "number" && port.hostPort !== 0) {
          report(
            "hostPort",
            `${at}.ports[${portIndex}].hostPort`,
            `${who} binds port ${port.hostPort} on the shared node (hostPort); remove hostPort and reach the pod through a Service.`,
          );
        }
      });
    });
  }
  return violations;
};

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

const policyFields = ["enabled", "disabled", "allowedCapabilities"];

/**
 * An operator's isolation policy, as JSON text or an already parsed value:
 * `{ "enabled"?: rule[], "disabled"?: rule[], "allowedCapabilities"?: string[] }`.
 * Omitted fields keep the defaults (every rule enforced, NET_BIND_SERVICE allowed); `disabled`
 * removes rules from `enabled`. Unknown fields are errors, so a misspelt setting is not silently
 * ignored. Throws IsolationPolicyError naming the bad field.
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
  let allowedCapabilities = defaults.allowedCapabilities;
  if (input.allowedCapabilities !== undefined) {
    allowedCapabilities = stringList(input.allowedCapabilities, "allowedCapabilities").map(
      (capability, index) => {
        const name = normalizeCapability(capability);
        if (name === "ALL") {
          throw new IsolationPolicyError(
            `allowedCapabilities[${index}]`,
            `"ALL" can never be allowed; list the capabilities tenants need one by one`,
          );
        }
        if (!/^[A-Z][A-Z0-9_]*$/.test(name)) {
          throw new IsolationPolicyError(
            `allowedCapabilities[${index}]`,
            `"${capability}" is not a capability name (like NET_BIND_SERVICE)`,
          );
        }
        return name;
      },
    );
  }
  return {
    enabled: [...new Set(enabled)].filter((rule) => !disabled.has(rule)),
    allowedCapabilities: [...new Set(allowedCapabilities)],
  };
}
