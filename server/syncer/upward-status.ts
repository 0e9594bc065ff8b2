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
] as const;

/**
 * A JSON merge patch turning the tenant pod's status into the super pod's (null removes fields the
 * super cluster does not report), or null when they already agree. Arrays are replaced whole, so
 * conditions and container statuses end up exactly as reported below.
 */
export function podStatusPatch(tenantStatus: Json | undefined, superStatus: Json | undefined): Json | null {
  const patch: Json = {};
  for (const field of upwardPodStatusFields) {
    const want = superStatus?.[field];
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
