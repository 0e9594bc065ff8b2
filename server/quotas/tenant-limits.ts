/**
 * What a tenant is allowed as the usage pages read it (Tenant.spec.quota.hard, from the shared
 * Tenant informer): the same source the webhook enforces. The quota's write side, which reads the
 * Tenant fresh, is tenant-quota.ts.
 */
import { tenantHardOf } from "@/server/admission/hard";
import type { QuotaHard } from "@/server/core/quota-resources";
import { getTenant, type TenantResource } from "@/server/tenants/tenant-resources";

export interface TenantLimits {
  /** Whether spec.quota.hard names any limit at all. */
  hasQuota: boolean;
  hard: QuotaHard;
  /** Entries Ring0 does not enforce (written with kubectl), left out of `hard`. */
  ignored: string[];
}

export function limitsOf(tenant: TenantResource | undefined): TenantLimits {
  const written = tenant?.spec?.quota?.hard;
  if (!written || Object.keys(written).length === 0) return { hasQuota: false, hard: {}, ignored: [] };
  const { hard, ignored } = tenantHardOf(written);
  return { hasQuota: Object.keys(hard).length > 0, hard, ignored };
}

export async function tenantLimits(tenant: string): Promise<TenantLimits> {
  return limitsOf(await getTenant(tenant, "tenant list"));
}
