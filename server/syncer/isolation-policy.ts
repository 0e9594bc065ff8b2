/**
 * The policies derived from the operator's isolation policy (parsed, with its rules and defaults,
 * in the leaf `isolation-schema.ts`): one tenant's (its own Pod Security level) and a pod's already
 * running below.
 */
import { type IsolationPolicy, type PodSecurityLevel, podSecurityLevels } from "./isolation-schema";

/**
 * The rules a pod already running below is held to again when the tenant changes it: Kubernetes
 * lets a running pod change only in a few fields (images, added tolerations, …), and of those only
 * tolerations reach further than the pod.
 */
export function runningPodPolicy(policy: IsolationPolicy): IsolationPolicy {
  return { ...policy, enabled: policy.enabled.filter((rule) => rule === "tolerations") };
}

/**
 * The policy a tenant's pods are held to: the operator's, at the tenant's own Pod Security level
 * and with its own default runtime class if its Tenant sets them (a runtime class the operator does
 * not allow stays the default all the same: the filter then refuses the tenant's pods and says so).
 */
export function tenantIsolationPolicy(
  policy: IsolationPolicy,
  level: unknown,
  runtimeClass?: unknown,
): IsolationPolicy {
  let tenant = policy;
  if (podSecurityLevels.includes(level as PodSecurityLevel))
    tenant = { ...tenant, podSecurity: level as PodSecurityLevel };
  if (typeof runtimeClass === "string" && runtimeClass !== "")
    tenant = { ...tenant, defaultRuntimeClass: runtimeClass };
  return tenant;
}

/**
 * The runtime class a tenant pod runs under below: its own, else the tenant's default, and only ever
 * one the operator allows (the filter refuses any other with a reason; should an operator turn that
 * rule off, an unknown class is dropped here rather than passed to the super cluster).
 */
export function runtimeClassOf(spec: { runtimeClassName?: unknown } | undefined, policy: IsolationPolicy) {
  const named = spec?.runtimeClassName;
  const wanted = typeof named === "string" && named !== "" ? named : policy.defaultRuntimeClass;
  return wanted !== undefined && policy.runtimeClasses.includes(wanted) ? wanted : undefined;
}
