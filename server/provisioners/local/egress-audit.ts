/**
 * Refusals of the egress wall, told to the operator's audit without letting a tenant flood it: the
 * first refusal of a destination is recorded, repeats of it within a minute only counted (and told
 * with its next record), and at most `perTenant` records a minute per tenant.
 */
import { recordAudit } from "@/server/audit/service";
import type { EgressRefusal } from "./egress";

export interface RefusalThrottleOptions {
  windowMs?: number;
  perTenant?: number;
  maxDestinations?: number;
  now?: () => number;
}

/** `record(refusal, repeats)`: `repeats` refusals of the same destination went unrecorded before it. */
export function throttleRefusals(
  record: (refusal: EgressRefusal, repeats: number) => void,
  options: RefusalThrottleOptions = {},
): (refusal: EgressRefusal) => void {
  const windowMs = options.windowMs ?? 60_000;
  const perTenant = options.perTenant ?? 20;
  const maxDestinations = options.maxDestinations ?? 10_000;
  const now = options.now ?? Date.now;
  /** Destination → when it was last recorded and how many refusals went unrecorded since. */
  const destinations = new Map<string, { at: number; repeats: number }>();
  /** Tenant → the start of its current window and how many records it has had in it. */
  const tenants = new Map<string, { start: number; records: number }>();
  let pruned = now();

  return (refusal) => {
    const at = now();
    if (at - pruned >= windowMs) {
      pruned = at;
      for (const [key, seen] of destinations) {
        if (at - seen.at >= windowMs && seen.repeats === 0) destinations.delete(key);
      }
    }
    const key = `${refusal.tenant}\n${refusal.selection}\n${refusal.target.host}:${refusal.target.port}`;
    const seen = destinations.get(key);
    if (seen && at - seen.at < windowMs) {
      seen.repeats += 1;
      return;
    }
    let budget = tenants.get(refusal.tenant);
    if (!budget || at - budget.start >= windowMs) {
      budget = { start: at, records: 0 };
      tenants.set(refusal.tenant, budget);
    }
    if (budget.records >= perTenant) {
      // Over the tenant's budget: counted, and told with the destination's next record (a bounded
      // number of destinations is remembered; a scan beyond that is in the log only).
      if (seen) seen.repeats += 1;
      else if (destinations.size < maxDestinations) destinations.set(key, { at: at - windowMs, repeats: 1 });
      return;
    }
    budget.records += 1;
    destinations.set(key, { at, repeats: 0 });
    record(refusal, seen?.repeats ?? 0);
  };
}

/** Ring0's hearing of refusals: each recorded (throttled) as an `egress.refused` audit event. */
export function auditedRefusals(options: RefusalThrottleOptions = {}): (refusal: EgressRefusal) => void {
  return throttleRefusals(
    (refusal, repeats) =>
      void recordAudit({
        actorId: null,
        actorName: "Ring0",
        actorTenant: null,
        tenant: refusal.tenant,
        action: "egress.refused",
        targetKind: "address",
        target: `${refusal.target.host}:${refusal.target.port}`,
        result: "denied",
        requestId: null,
        detail: { egress: refusal.selection, reason: refusal.why, unrecordedRepeats: repeats },
      }),
    options,
  );
}
