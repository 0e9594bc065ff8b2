/**
 * The isolation checks of what reaches the shared node, or storage beyond the tenant: the node's
 * namespaces, a pinned node, unsafe sysctls, host ports, probe and lifecycle hosts (the node's
 * kubelet connects for the pod), volumes and tolerations.
 */
import { type ContainerAt, listOf, objectOf, type Report, textOf, type Untrusted } from "./pod-as-written";

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

const probeFields = ["livenessProbe", "readinessProbe", "startupProbe"] as const;
const lifecycleFields = ["postStart", "preStop"] as const;

/** Kubernetes accepts "net/ipv4/tcp_syncookies" for "net.ipv4.tcp_syncookies" (slash-separated form). */
export function normalizeSysctl(name: string): string {
  const slash = name.indexOf("/");
  const dot = name.indexOf(".");
  if (slash === -1 || (dot !== -1 && dot < slash)) return name;
  return name.replace(/[./]/g, (separator) => (separator === "/" ? "." : "/"));
}

/** The pod's use of the node's network, process and IPC namespaces. */
export function checkHostNamespaces(spec: Untrusted, report: Report): void {
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
}

/** A node the tenant pinned (only the super scheduler chooses nodes). */
export function checkNodeName(spec: Untrusted, report: Report): void {
  if (typeof spec.nodeName === "string" && spec.nodeName !== "") {
    report(
      "nodeName",
      "spec.nodeName",
      `The pod pins node "${spec.nodeName}", but nodes of the shared cluster are chosen by its scheduler; remove spec.nodeName (use a nodeSelector on your virtual nodes' labels instead).`,
    );
  }
}

/**
 * The runtime the pod runs under below: only a RuntimeClass the operator allows (a tenant's class
 * maps to the super cluster's class of the same name, whose handler is the operator's); the
 * tenant's default counts when the pod names none.
 */
export function checkRuntimeClass(
  spec: Untrusted,
  allowed: readonly string[],
  tenantDefault: string | undefined,
  report: Report,
): void {
  const named = spec.runtimeClassName;
  const allowedText = allowed.length > 0 ? allowed.map((name) => `"${name}"`).join(", ") : "none";
  if (named !== undefined && named !== null && named !== "") {
    if (typeof named !== "string" || !allowed.includes(named)) {
      report(
        "runtimeClass",
        "spec.runtimeClassName",
        `Runtime class "${String(named)}" is not one the operator allows on the shared nodes (allowed: ${allowedText}); name an allowed one or remove spec.runtimeClassName.`,
      );
    }
  } else if (tenantDefault !== undefined && !allowed.includes(tenantDefault)) {
    report(
      "runtimeClass",
      "spec.runtimeClassName",
      `Your tenant's default runtime class "${tenantDefault}" is not one the operator allows (allowed: ${allowedText}); an operator must change the Tenant's spec.syncer.runtimeClass.`,
    );
  }
}

/** Sysctls outside Kubernetes' safe set. */
export function checkSysctls(podContext: Untrusted | undefined, report: Report): void {
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
}

/** Ports a container binds on the node itself. */
export function checkHostPorts({ container, at, who }: ContainerAt, report: Report): void {
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
}

/** Probes and lifecycle handlers with a host make the node's kubelet connect wherever the tenant says. */
export function checkHandlerHosts(container: Untrusted, at: string, who: string, report: Report): void {
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

export function checkVolumes(spec: Untrusted, report: Report): void {
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

export function checkTolerations(spec: Untrusted, allowed: ReadonlySet<string>, report: Report): void {
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
