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

/** The policy a tenant's pods are held to: the operator's, at the tenant's own level if its Tenant sets one. */
export function tenantIsolationPolicy(policy: IsolationPolicy, level: unknown): IsolationPolicy {
  return podSecurityLevels.includes(level as PodSecurityLevel)
    ? { ...policy, podSecurity: level as PodSecurityLevel }
    : policy;
}
