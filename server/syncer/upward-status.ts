/**
 * What goes up into the tenant's status (pure): its pod's status and its service's load balancer
 * as merge patches from their copies below, and the condition a refused pod gets.
 */
import type { Json } from "./synced-kinds";

/** The status fields copied up, exactly as the super cluster reports them. */
export const upwardPodStatusFields = [
  "phase",
  "conditions",
  "message",
  "reason",
  "podIP",
  "podIPs",
  "hostIP",
  "hostIPs",
  "startTime",
  "initContainerStatuses",
  "containerStatuses",
  "ephemeralContainerStatuses",
  "resize",
  "resourceClaimStatuses",
  "observedGeneration",
] as const;

/**
 * The super pod's status in the tenant's terms: its observed generations (the pod's, and each
 * condition's) are the super pod's, which counts its own writes. Ring0 writes each tenant
 * generation below in one write, annotated (`tenantGeneration`): what has observed the super pod's
 * latest generation has observed that tenant generation, and one that lags by k generations below
 * is told as lagging by k in the tenant (never below 1). Without the annotation (a pod written by
 * an older Ring0) no observed generation goes up.
 */
export function tenantPodStatus(
  superStatus: Json | undefined,
  generations: { superGeneration?: unknown; tenantGeneration?: unknown },
): Json | undefined {
  if (!superStatus) return superStatus;
  const below = Number(generations.superGeneration);
  const tenant = Number(generations.tenantGeneration);
  const known = Number.isInteger(below) && below > 0 && Number.isInteger(tenant) && tenant > 0;
  const told = (observed: unknown): number | undefined => {
    if (!known || typeof observed !== "number") return undefined;
    return observed >= below ? tenant : Math.max(1, tenant - (below - observed));
  };
  const status: Json = { ...superStatus };
  const observed = told(superStatus.observedGeneration);
  if (observed === undefined) delete status.observedGeneration;
  else status.observedGeneration = observed;
  if (Array.isArray(superStatus.conditions)) {
    status.conditions = superStatus.conditions.map((condition: Json) => {
      if (!condition || typeof condition !== "object" || condition.observedGeneration === undefined)
        return condition;
      const { observedGeneration, ...rest } = condition;
      const mapped = told(observedGeneration);
      return mapped === undefined ? rest : { ...rest, observedGeneration: mapped };
    });
  }
  return status;
}

/**
 * A JSON merge patch turning the tenant pod's status into the super pod's (null removes fields the
 * super cluster does not report), or null when they already agree. Arrays are replaced whole, so
 * conditions and container statuses end up exactly as reported below, with `ring0Conditions`
 * (Ring0's own, still true) beside them.
 */
export function podStatusPatch(
  tenantStatus: Json | undefined,
  superStatus: Json | undefined,
  ring0Conditions: readonly Json[] = [],
): Json | null {
  const patch: Json = {};
  for (const field of upwardPodStatusFields) {
    let want = superStatus?.[field];
    // Ring0's own conditions on the pod (a refused change it still reports) stay beside those
    // from below: copied over, they would be re-added, and wiped again, at every sync.
    if (field === "conditions" && ring0Conditions.length > 0)
      want = [...(Array.isArray(want) ? want : []), ...ring0Conditions];
    const have = tenantStatus?.[field];
    if (JSON.stringify(want ?? null) === JSON.stringify(have ?? null)) continue;
    patch[field] = want ?? null;
  }
  return Object.keys(patch).length > 0 ? patch : null;
}

/**
 * A JSON merge patch giving the tenant's service the load balancer the super cluster reports for
 * its copy (ingress replaced whole, removed when none), or null when they already agree. Only
 * status.loadBalancer goes up: conditions belong to the tenant's own controllers.
 */
export function serviceStatusPatch(
  tenantStatus: Json | undefined,
  superStatus: Json | undefined,
): Json | null {
  const want = (superStatus?.loadBalancer as Json | undefined)?.ingress;
  const have = (tenantStatus?.loadBalancer as Json | undefined)?.ingress;
  const empty = (ingress: unknown) => !Array.isArray(ingress) || ingress.length === 0;
  if (empty(want) && empty(have)) return null;
  if (JSON.stringify(want ?? null) === JSON.stringify(have ?? null)) return null;
  return { loadBalancer: { ingress: empty(want) ? null : want } };
}

export const isolationConditionType = "ring0.dev/Isolation";
