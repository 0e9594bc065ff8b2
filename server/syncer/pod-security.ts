/**
 * The isolation checks of the Pod Security Standard's securityContext fields (privileged mode,
 * privilege escalation, /proc, capabilities, AppArmor, SELinux, seccomp, Windows host processes,
 * the deprecated AppArmor and seccomp annotations), the "restricted" level's own checks, and the
 * Pod Security labels that make the super cluster's admission a second wall.
 */
import type { IsolationPolicy, IsolationRule } from "./contracts";
import { normalizeCapability } from "./isolation-schema";
import { type ContainerAt, listOf, objectOf, type Report, type Untrusted } from "./pod-as-written";

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

function isValidSeccompType(type: unknown): boolean {
  return type === "RuntimeDefault" || type === "Localhost";
}

function isValidSeccompAnnotation(value: string): boolean {
  return value === "runtime/default" || value === "docker/default" || value.startsWith("localhost/");
}

function isValidAppArmorAnnotation(value: string): boolean {
  return value === "" || value === "runtime/default" || value.startsWith("localhost/");
}

/**
 * What a container may do beyond its own process: privileged mode, privilege escalation, an
 * unmasked /proc and added capabilities (under "restricted", it must also drop them all).
 */
export function checkContainerPrivileges(
  { container, at, who }: ContainerAt,
  allowedCapabilities: ReadonlySet<string>,
  restricted: boolean,
  report: Report,
): void {
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
}

/** The fields the pod's and each container's securityContext share: AppArmor, SELinux, seccomp, Windows. */
export function checkSecurityContext(
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
export function checkAnnotations(metadata: Untrusted | undefined, report: Report): void {
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

/** The restricted level's checks beyond baseline: non-root users and a seccomp profile for every container. */
export function checkRestricted(
  podContext: Untrusted | undefined,
  containers: ContainerAt[],
  report: Report,
): void {
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
