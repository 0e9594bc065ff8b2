/**
 * The isolation filter (issues 5 and 14): a tenant pod that could escape onto the shared
 * super-cluster node never reaches the super cluster. `checkPodIsolation` lists every violation
 * (rule, JSON field path, one sentence for the tenant) so the syncer can reject the pod with an
 * event and a condition that say what to change. Operators relax rules, widen the allowed
 * capabilities and tolerations and choose the default Pod Security level through
 * `parseIsolationPolicy`; a Tenant may be held to "restricted" on its own.
 *
 * The rules hold every check of the Pod Security Standard "baseline" (k8s.io/pod-security-admission
 * 1.36: host namespaces, privileged, capabilities, hostPath, hostPorts, AppArmor, SELinux, /proc
 * mount, seccomp, sysctls, Windows host processes, probe and lifecycle hosts), often more strictly
 * (only NET_BIND_SERVICE may be added; /proc stays masked even in a user namespace), plus Ring0's
 * own: a volume allow-list, tolerations only of taints the operator allows, no privilege
 * escalation, no pinned node. "restricted" adds that standard's remaining checks.
 *
 * The check is of the pod as the tenant wrote it: the "nodeName" rule refuses a pod that pins a
 * node, so the syncer must check a pod before it binds the pod to a vNode itself, not afterwards.
 * Tenant input is untrusted and may be malformed, so every field is read defensively.
 */
import type { V1Pod } from "@/server/k8s/kinds/node";
import type {
  CheckPodIsolation,
  IsolationPolicy,
  IsolationRule,
  IsolationViolation,
  PodSecurityLevel,
} from "./contracts";
import { normalizeCapability, podSecurityLevels } from "./isolation-schema";

export {
  defaultAllowedCapabilities,
  defaultAllowedTolerations,
  defaultIsolationPolicy,
  IsolationPolicyError,
  isolationRules,
  normalizeCapability,
  parseIsolationPolicy,
  podSecurityLevels,
} from "./isolation-schema";

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

/**
 * Volume types a tenant pod may use: its own objects (config maps, secrets, claims) and the pod's
 * own scratch space. Everything else reaches the node or storage outside the tenant (NFS, iSCSI,
 * cloud disks, gitRepo's git on the node, inline CSI drivers). The restricted standard's list has
 * these plus csi and image, so "restricted" adds nothing here.
 */
export const allowedVolumeTypes: ReadonlySet<string> = new Set([
  "configMap",
  "secret",
  "emptyDir",
  "projected",
  "downwardAPI",
  "persistentVolumeClaim",
  "ephemeral",
]);

/**
 * Projected sources a tenant pod may use. A service-account token source is the tenant's own
 * (kube-api-access-*): translation drops that volume, so the super cluster never mints a token.
 * clusterTrustBundle and podCertificate would read the super cluster's bundles or identity.
 */
const allowedProjectedSources: ReadonlySet<string> = new Set([
  "configMap",
  "secret",
  "downwardAPI",
  "serviceAccountToken",
]);

/** What lets an ephemeral volume's claim bind to an existing volume or copy existing data. */
const claimPreBindingFields = ["volumeName", "dataSource", "dataSourceRef"] as const;

/** SELinux types the baseline standard allows (container_engine_t since 1.31). */
const allowedSeLinuxTypes: ReadonlySet<string> = new Set([
  "",
  "container_t",
  "container_init_t",
  "container_kvm_t",
  "container_engine_t",
]);

/** The capabilities the baseline standard lets a container add (what container runtimes grant by default). */
const baselineCapabilities: ReadonlySet<string> = new Set([
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
]);

export const appArmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/";
export const seccompPodAnnotation = "seccomp.security.alpha.kubernetes.io/pod";
export const seccompContainerAnnotationPrefix = "container.seccomp.security.alpha.kubernetes.io/";

/** Kubernetes accepts "net/ipv4/tcp_syncookies" for "net.ipv4.tcp_syncookies" (slash-separated form). */
export function normalizeSysctl(name: string): string {
  const slash = name.indexOf("/");
  const dot = name.indexOf(".");
  if (slash === -1 || (dot !== -1 && dot < slash)) return name;
  return name.replace(/[./]/g, (separator) => (separator === "/" ? "." : "/"));
}

/** The tenant's JSON as written: any field may be missing or of the wrong type. */
type Untrusted = Record<string, unknown>;

function objectOf(value: unknown): Untrusted | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Untrusted)
    : undefined;
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function textOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

const containerKinds = [
  { field: "containers", noun: "Container" },
  { field: "initContainers", noun: "Init container" },
  { field: "ephemeralContainers", noun: "Ephemeral container" },
] as const;

const probeFields = ["livenessProbe", "readinessProbe", "startupProbe"] as const;
const lifecycleFields = ["postStart", "preStop"] as const;

/** One container of any kind, with where it is and how to name it to the tenant. */
interface ContainerAt {
  container: Untrusted;
  /** JSON path, e.g. spec.initContainers[0]. */
  at: string;
  /** For messages, e.g. `Init container "setup"`. */
  who: string;
}

function containersOf(spec: Untrusted): ContainerAt[] {
  const found: ContainerAt[] = [];
  for (const kind of containerKinds) {
    listOf(spec[kind.field]).forEach((entry, index) => {
      const container = objectOf(entry);
      if (!container) return;
      const name = textOf(container.name) ?? String(index);
      found.push({ container, at: `spec.${kind.field}[${index}]`, who: `${kind.noun} "${name}"` });
    });
  }
  return found;
}

function isValidSeccompType(type: unknown): boolean {
  return type === "RuntimeDefault" || type === "Localhost";
}

function isValidSeccompAnnotation(value: string): boolean {
  return value === "runtime/default" || value === "docker/default" || value.startsWith("localhost/");
}

function isValidAppArmorAnnotation(value: string): boolean {
  return value === "" || value === "runtime/default" || value.startsWith("localhost/");
}

export const checkPodIsolation: CheckPodIsolation = (pod: V1Pod, policy: IsolationPolicy) => {
  const enabled = new Set(policy.enabled);
  const restricted = policy.podSecurity === "restricted";
  // "restricted" lets a container add NET_BIND_SERVICE at most, whatever the operator allows others.
  const allowedCapabilities = new Set(
    policy.allowedCapabilities
      .map(normalizeCapability)
      .filter((name) => name !== "ALL" && (!restricted || name === "NET_BIND_SERVICE")),
  );
  const allowedTolerations = new Set(policy.allowedTolerations);
  const violations: IsolationViolation[] = [];
  const report = (rule: IsolationRule, field: string, message: string) => {
    if (enabled.has(rule)) violations.push({ rule, field, message });
  };
  const spec = objectOf(objectOf(pod)?.spec);
  if (!spec) return violations;
  const podContext = objectOf(spec.securityContext);
  const containers = containersOf(spec);

  // ---- the pod ----------------------------------------------------------------------------------
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
  listOf(podContext?.sysctls).forEach((entry, index) => {
    const name = textOf(objectOf(entry)?.name) ?? "";
    if (!safeSysctls.has(normalizeSysctl(name))) {
      report(
        "sysctls",
        `spec.securityContext.sysctls[${index}].name`,
        `Sysctl "${name}" is not in Kubernetes' safe set and could change the shared node's kernel for other tenants; remove it or use a safe sysctl.`,
      );
    }
  });
  checkVolumes(spec, report);
  checkTolerations(spec, allowedTolerations, report);
  checkAnnotations(objectOf(objectOf(pod)?.metadata), report);
  checkSecurityContext(podContext, "spec.securityContext", "The pod", report);

  // ---- every container --------------------------------------------------------------------------
  for (const { container, at, who } of containers) {
    const context = objectOf(container.securityContext);
    const where = `${at}.securityContext`;
    if (context?.privileged === true) {
      report(
        "privileged",
        `${where}.privileged`,
        `${who} asks for privileged mode, which gives it full control of the shared node; remove securityContext.privileged.`,
      );
    }
    if (context?.allowPrivilegeEscalation === true) {
      report(
        "allowPrivilegeEscalation",
        `${where}.allowPrivilegeEscalation`,
        `${who} allows privilege escalation (setuid binaries can gain more rights than it was given); set securityContext.allowPrivilegeEscalation to false or remove it.`,
      );
    } else if (restricted && context?.allowPrivilegeEscalation !== false) {
      report(
        "allowPrivilegeEscalation",
        `${where}.allowPrivilegeEscalation`,
        `${who} does not forbid privilege escalation, which the restricted Pod Security level requires; set securityContext.allowPrivilegeEscalation to false.`,
      );
    }
    const procMount = context?.procMount;
    if (procMount !== undefined && procMount !== null && procMount !== "Default") {
      report(
        "procMount",
        `${where}.procMount`,
        `${who} asks for an unmasked /proc (procMount "${String(procMount)}"), which exposes the shared node's kernel interfaces; remove securityContext.procMount.`,
      );
    }
    const capabilities = objectOf(context?.capabilities);
    listOf(capabilities?.add).forEach((capability, index) => {
      const name = typeof capability === "string" ? normalizeCapability(capability) : "";
      if (!allowedCapabilities.has(name)) {
        report(
          "capabilities",
          `${where}.capabilities.add[${index}]`,
          `${who} adds capability "${String(capability)}", which is not allowed on the shared nodes; remove it (allowed: ${allowedCapabilities.size ? [...allowedCapabilities].join(", ") : "none"}).`,
        );
      }
    });
    if (
      restricted &&
      !listOf(capabilities?.drop).some(
        (name) => typeof name === "string" && normalizeCapability(name) === "ALL",
      )
    ) {
      report(
        "capabilities",
        `${where}.capabilities.drop`,
        `${who} keeps the runtime's default capabilities, but the restricted Pod Security level requires dropping them all; set securityContext.capabilities.drop to ["ALL"].`,
      );
    }
    listOf(container.ports).forEach((entry, index) => {
      const hostPort = objectOf(entry)?.hostPort;
      if (typeof hostPort === "number" && hostPort !== 0) {
        report(
          "hostPort",
          `${at}.ports[${index}].hostPort`,
          `${who} binds port ${hostPort} on the shared node (hostPort); remove hostPort and reach the pod through a Service.`,
        );
      }
    });
    checkSecurityContext(context, where, who, report);
    checkHandlerHosts(container, at, who, report);
  }

  if (restricted) checkRestricted(podContext, containers, report);
  return violations;
};

type Report = (rule: IsolationRule, field: string, message: string) => void;

/** The fields the pod's and each container's securityContext share: AppArmor, SELinux, seccomp, Windows. */
function checkSecurityContext(
  context: Untrusted | undefined,
  where: string,
  who: string,
  report: Report,
): void {
  if (!context) return;
  const appArmorType = objectOf(context.appArmorProfile)?.type;
  if (
    objectOf(context.appArmorProfile) &&
    appArmorType !== "RuntimeDefault" &&
    appArmorType !== "Localhost"
  ) {
    report(
      "appArmorProfile",
      `${where}.appArmorProfile.type`,
      `${who} asks for AppArmor profile type "${String(appArmorType)}", which lifts the confinement between it and the shared node; set type RuntimeDefault or Localhost, or remove securityContext.appArmorProfile.`,
    );
  }
  const seLinux = objectOf(context.seLinuxOptions);
  if (seLinux) {
    const type = seLinux.type ?? "";
    if (typeof type !== "string" || !allowedSeLinuxTypes.has(type)) {
      report(
        "seLinuxOptions",
        `${where}.seLinuxOptions.type`,
        `${who} asks for SELinux type "${String(type)}", which could give it the node's rights (as spc_t does); remove the type or use container_t, container_init_t, container_kvm_t or container_engine_t.`,
      );
    }
    for (const field of ["user", "role"] as const) {
      const value = seLinux[field];
      if (value !== undefined && value !== null && value !== "") {
        report(
          "seLinuxOptions",
          `${where}.seLinuxOptions.${field}`,
          `${who} sets an SELinux ${field} ("${String(value)}"), which the shared nodes reserve for themselves; remove securityContext.seLinuxOptions.${field}.`,
        );
      }
    }
  }
  const seccomp = objectOf(context.seccompProfile);
  if (seccomp && !isValidSeccompType(seccomp.type)) {
    report(
      "seccompProfile",
      `${where}.seccompProfile.type`,
      `${who} asks for seccomp profile type "${String(seccomp.type)}", which lets it make every system call into the shared node's kernel; set type RuntimeDefault or Localhost.`,
    );
  }
  if (objectOf(context.windowsOptions)?.hostProcess === true) {
    report(
      "windowsHostProcess",
      `${where}.windowsOptions.hostProcess`,
      `${who} asks to run as a Windows host process, which runs it on the node itself; remove securityContext.windowsOptions.hostProcess.`,
    );
  }
}

/** The deprecated AppArmor and seccomp annotations (the API server still turns AppArmor's into fields). */
function checkAnnotations(metadata: Untrusted | undefined, report: Report): void {
  for (const [key, value] of Object.entries(objectOf(metadata?.annotations) ?? {})) {
    const text = typeof value === "string" ? value : String(value);
    const field = `metadata.annotations[${key}]`;
    if (key.startsWith(appArmorAnnotationPrefix) && !isValidAppArmorAnnotation(text)) {
      report(
        "appArmorProfile",
        field,
        `Annotation ${key} asks for AppArmor profile "${text}", which lifts the confinement between the container and the shared node; use runtime/default or localhost/<profile>, or remove it.`,
      );
    }
    if (
      (key === seccompPodAnnotation || key.startsWith(seccompContainerAnnotationPrefix)) &&
      !isValidSeccompAnnotation(text)
    ) {
      report(
        "seccompProfile",
        field,
        `Annotation ${key} asks for seccomp profile "${text}", which lets containers make every system call into the shared node's kernel; remove it and set securityContext.seccompProfile.type to RuntimeDefault.`,
      );
    }
  }
}

/** Probes and lifecycle handlers with a host make the node's kubelet connect wherever the tenant says. */
function checkHandlerHosts(container: Untrusted, at: string, who: string, report: Report): void {
  const handlers: [string, Untrusted | undefined][] = [
    ...probeFields.map((field): [string, Untrusted | undefined] => [field, objectOf(container[field])]),
    ...lifecycleFields.map((field): [string, Untrusted | undefined] => [
      `lifecycle.${field}`,
      objectOf(objectOf(container.lifecycle)?.[field]),
    ]),
  ];
  for (const [path, handler] of handlers) {
    for (const action of ["httpGet", "tcpSocket"] as const) {
      const host = objectOf(handler?.[action])?.host;
      if (host !== undefined && host !== null && host !== "") {
        report(
          "probeHost",
          `${at}.${path}.${action}.host`,
          `${who} has its ${path} ${action} connect to host "${String(host)}", so the shared node's kubelet would make that request for you; remove the host (the pod's own address is used).`,
        );
      }
    }
  }
}

function checkVolumes(spec: Untrusted, report: Report): void {
  listOf(spec.volumes).forEach((entry, index) => {
    const volume = objectOf(entry);
    if (!volume) return;
    const at = `spec.volumes[${index}]`;
    const what = `Volume "${textOf(volume.name) ?? index}"`;
    for (const [type, source] of Object.entries(volume)) {
      if (type === "name" || source === undefined || source === null) continue;
      if (type === "hostPath") {
        report(
          "hostPath",
          `${at}.hostPath`,
          `${what} mounts a path of the shared node (hostPath); use an emptyDir, configMap, secret or persistentVolumeClaim volume instead.`,
        );
      } else if (!allowedVolumeTypes.has(type)) {
        report(
          "volumes",
          `${at}.${type}`,
          `${what} is of type ${type}, which reaches storage or the node outside your tenant; use a configMap, secret, emptyDir, projected, downwardAPI, persistentVolumeClaim or ephemeral volume instead.`,
        );
      }
    }
    listOf(objectOf(volume.projected)?.sources).forEach((entry, sourceIndex) => {
      for (const [type, source] of Object.entries(objectOf(entry) ?? {})) {
        if (source === undefined || source === null || allowedProjectedSources.has(type)) continue;
        report(
          "volumes",
          `${at}.projected.sources[${sourceIndex}].${type}`,
          `${what} projects a ${type}, which would come from the shared cluster rather than your tenant; remove that source (configMap, secret, downwardAPI and serviceAccountToken sources are allowed).`,
        );
      }
    });
    const claim = objectOf(objectOf(objectOf(volume.ephemeral)?.volumeClaimTemplate)?.spec);
    for (const field of claimPreBindingFields) {
      const value = claim?.[field];
      if (value === undefined || value === null || value === "") continue;
      report(
        "volumes",
        `${at}.ephemeral.volumeClaimTemplate.spec.${field}`,
        `${what} claims an existing volume or its data (${field}), which may belong to another tenant; remove ${field} and let the claim get a new volume.`,
      );
    }
  });
}

function checkTolerations(spec: Untrusted, allowed: ReadonlySet<string>, report: Report): void {
  listOf(spec.tolerations).forEach((entry, index) => {
    const toleration = objectOf(entry);
    if (!toleration) return;
    const key = textOf(toleration.key) ?? "";
    if (key === "") {
      report(
        "tolerations",
        `spec.tolerations[${index}]`,
        `Toleration ${index} has no key, so it tolerates every taint, including those operators put on the shared nodes to keep pods off; remove it or name a taint key.`,
      );
    } else if (!allowed.has(key)) {
      report(
        "tolerations",
        `spec.tolerations[${index}].key`,
        `Toleration ${index} tolerates taint "${key}", which the operator of the shared nodes has not allowed tenants to tolerate; remove it (allowed: ${allowed.size ? [...allowed].join(", ") : "none"}).`,
      );
    }
  });
}

/** The restricted level's checks beyond baseline: non-root users and a seccomp profile for every container. */
function checkRestricted(podContext: Untrusted | undefined, containers: ContainerAt[], report: Report): void {
  const podNonRoot = podContext?.runAsNonRoot;
  if (podNonRoot === false) {
    report(
      "runAsNonRoot",
      "spec.securityContext.runAsNonRoot",
      "The pod allows running as root, which the restricted Pod Security level forbids; set spec.securityContext.runAsNonRoot to true.",
    );
  }
  if (podContext?.runAsUser === 0) {
    report(
      "runAsUser",
      "spec.securityContext.runAsUser",
      "The pod runs as user 0 (root), which the restricted Pod Security level forbids; set spec.securityContext.runAsUser to a non-zero user.",
    );
  }
  const podSeccomp = objectOf(podContext?.seccompProfile);
  for (const { container, at, who } of containers) {
    const context = objectOf(container.securityContext);
    const nonRoot = context?.runAsNonRoot;
    if (nonRoot === false) {
      report(
        "runAsNonRoot",
        `${at}.securityContext.runAsNonRoot`,
        `${who} allows running as root, which the restricted Pod Security level forbids; set its securityContext.runAsNonRoot to true.`,
      );
    } else if (nonRoot !== true && podNonRoot !== true && podNonRoot !== false) {
      report(
        "runAsNonRoot",
        `${at}.securityContext.runAsNonRoot`,
        `${who} may run as root, which the restricted Pod Security level forbids; set spec.securityContext.runAsNonRoot (or the container's) to true.`,
      );
    }
    if (context?.runAsUser === 0) {
      report(
        "runAsUser",
        `${at}.securityContext.runAsUser`,
        `${who} runs as user 0 (root), which the restricted Pod Security level forbids; set its securityContext.runAsUser to a non-zero user.`,
      );
    }
    // An explicit bad type was reported above; a bad pod-level type is fixed at the pod.
    if (!objectOf(context?.seccompProfile) && !podSeccomp) {
      report(
        "seccompProfile",
        `${at}.securityContext.seccompProfile.type`,
        `${who} has no seccomp profile, which the restricted Pod Security level requires; set spec.securityContext.seccompProfile.type (or the container's) to RuntimeDefault.`,
      );
    }
  }
}

/**
 * The Pod Security labels of a tenant's super namespaces: warn and audit at the tenant's level, and
 * enforce it too when the policy is at least as strict as the standard, so the super cluster's own
 * admission is a second wall. An operator who relaxed a rule the standard covers gets enforce
 * "privileged" instead (the filter still applies), or the super cluster would refuse what they allowed.
 */
export function podSecurityLabels(policy: IsolationPolicy): Record<string, string> {
  const level = policy.podSecurity;
  const enabled = new Set(policy.enabled);
  const covered: IsolationRule[] = [
    "privileged",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "hostPath",
    "hostPort",
    "capabilities",
    "procMount",
    "sysctls",
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "windowsHostProcess",
    "probeHost",
    ...(level === "restricted"
      ? (["volumes", "allowPrivilegeEscalation", "runAsNonRoot", "runAsUser"] as const)
      : []),
  ];
  const capabilitiesWithin =
    level === "restricted" ||
    policy.allowedCapabilities.every((name) => baselineCapabilities.has(normalizeCapability(name)));
  const enforce = capabilitiesWithin && covered.every((rule) => enabled.has(rule)) ? level : "privileged";
  const labels: Record<string, string> = {};
  const modes = { enforce, warn: level, audit: level };
  for (const [mode, value] of Object.entries(modes)) {
    labels[`pod-security.kubernetes.io/${mode}`] = value;
    labels[`pod-security.kubernetes.io/${mode}-version`] = "latest";
  }
  return labels;
}

/**
 * The rules a pod already running below is held to again when the tenant changes it: Kubernetes
 * lets a running pod change only in a few fields (images, added tolerations, …), and of those only
 * tolerations reach further than the pod.
 */
export function runningPodPolicy(policy: IsolationPolicy): IsolationPolicy {
  return { ...policy, enabled: policy.enabled.filter((rule) => rule === "tolerations") };
}

/** The policy a tenant's pods are held to: the operator's, at the tenant's own level if its Tenant sets one. */
export function tenantIsolationPolicy(policy: IsolationPolicy, level: unknown): IsolationPolicy {
  return podSecurityLevels.includes(level as PodSecurityLevel)
    ? { ...policy, podSecurity: level as PodSecurityLevel }
    : policy;
}
