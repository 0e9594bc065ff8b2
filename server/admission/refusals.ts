/**
 * Quota refusals kept for the portal's "why was this refused" view. A controller retrying the same
 * create (a ReplicaSet short of room) would write a row every few seconds: a refusal equal to one
 * recorded in the last minute (same tenant, object and message) bumps that row's count instead.
 */
import { formatResourceQuantity } from "@/server/core/quota-resources";
import { getDb } from "@/server/db/client";
import type { Logger } from "@/server/logger";
import { createQuotaUsageRepository } from "@/server/quotas/usage-repository";
import type { QuotaRefusal } from "./quota";

const COALESCE_MS = 60_000;

export async function recordQuotaRefusal(refusal: QuotaRefusal, now = new Date()): Promise<void> {
  const exceeded = refusal.exceeded.map((entry) => ({
    resource: entry.resource,
    requested: formatResourceQuantity(entry.resource, entry.requested),
    used: formatResourceQuantity(entry.resource, entry.used),
    limit: formatResourceQuantity(entry.resource, entry.limit),
  }));
  await createQuotaUsageRepository(getDb()).recordRefusal(
    {
      tenant: refusal.tenant,
      user: refusal.user ?? null,
      operation: refusal.operation,
      kind: refusal.kind,
      namespace: refusal.namespace ?? null,
      name: refusal.name ?? null,
      exceeded,
      message: refusal.message,
    },
    now,
    new Date(now.getTime() - COALESCE_MS),
  );
}

/** Records in the background, in order, never failing the admission answer. */
export function refusalRecorder(log: Logger): (refusal: QuotaRefusal) => void {
  let chain = Promise.resolve();
  return (refusal) => {
    chain = chain
      .then(() => recordQuotaRefusal(refusal))
      .catch((error: unknown) =>
        log.warn("recording a quota refusal failed", { tenant: refusal.tenant, error }),
      );
  };
}
