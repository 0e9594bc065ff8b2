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
 * escalation, no pinned node, runtime classes only the operator allows. "restricted" adds that standard's remaining checks.
 *
 * The check is of the pod as the tenant wrote it: the "nodeName" rule refuses a pod that pins a
 * node, so the syncer must check a pod before it binds the pod to a vNode itself, not afterwards.
 * Tenant input is untrusted and may be malformed, so every field is read defensively.
 */
import type { V1Pod } from "@/server/k8s/kinds/node";
import type { CheckPodIsolation, IsolationPolicy, IsolationRule, IsolationViolation } from "./contracts";
import {
  checkHandlerHosts,
  checkHostNamespaces,
  checkHostPorts,
  checkNodeName,
  checkRuntimeClass,
  checkSysctls,
  checkTolerations,
  checkVolumes,
} from "./host-access";
import { normalizeCapability } from "./isolation-schema";
import { containersOf, objectOf } from "./pod-as-written";
import {
  checkAnnotations,
  checkContainerPrivileges,
  checkRestricted,
  checkSecurityContext,
} from "./pod-security";

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
  checkHostNamespaces(spec, report);
  checkNodeName(spec, report);
  checkRuntimeClass(spec, policy.runtimeClasses, policy.defaultRuntimeClass, report);
  checkSysctls(podContext, report);
  checkVolumes(spec, report);
  checkTolerations(spec, allowedTolerations, report);
  checkAnnotations(objectOf(objectOf(pod)?.metadata), report);
  checkSecurityContext(podContext, "spec.securityContext", "The pod", report);

  // ---- every container --------------------------------------------------------------------------
  for (const entry of containers) {
    const { container, at, who } = entry;
    checkContainerPrivileges(entry, allowedCapabilities, restricted, report);
    checkHostPorts(entry, report);
    checkSecurityContext(objectOf(container.securityContext), `${at}.securityContext`, who, report);
    checkHandlerHosts(container, at, who, report);
  }

  if (restricted) checkRestricted(podContext, containers, report);
  return violations;
};
