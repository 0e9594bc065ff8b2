/**
 * Quota history: every `intervalMs` (RING0_QUOTA_SAMPLE_SECONDS) the Lease holder samples each
 * serving tenant's usage (read fresh from its control plane, counted as the webhook counts) with its
 * quota at that moment into QuotaSample, and drops samples older than the retention window
 * (RING0_QUOTA_RETENTION_DAYS). The portal's charts read them.
 */
import { hardOfTenant } from "@/server/admission/hard";
import { formatHard } from "@/server/core/quota-resources";
import { getDb } from "@/server/db/client";
import type { Logger } from "@/server/logger";
import type { TenantResource } from "@/server/tenants/tenant-resources";
import { type TenantUsage, tenantUsageOf } from "./tenant-usage";
import { createQuotaUsageRepository } from "./usage-repository";

export interface QuotaSamplerOptions {
  /** The Tenant objects now (the shared informer's snapshot). */
  tenants(): TenantResource[];
  intervalMs: number;
  retentionMs: number;
  logger: Logger;
  /** Test seam: how a tenant's usage is read. */
  usageOf?: (tenant: string) => Promise<TenantUsage | undefined>;
  now?: () => Date;
}

export interface QuotaSampler {
  /** Sample every tenant now (also what the timer does); resolves with how many were written. */
  sampleNow(): Promise<number>;
  stop(): void;
}

export function startQuotaSampler(options: QuotaSamplerOptions): QuotaSampler {
  const log = options.logger.child({ component: "quota-sampler" });
  const now = options.now ?? (() => new Date());
  const usageOf = options.usageOf ?? ((tenant: string) => tenantUsageOf(tenant));
  let stopped = false;
  let running: Promise<number> | undefined;

  const sampleOnce = async (): Promise<number> => {
    const samples = createQuotaUsageRepository(getDb());
    const at = now();
    let written = 0;
    for (const tenant of options.tenants()) {
      if (stopped) break;
      const name = tenant.metadata.name;
      if (tenant.metadata.deletionTimestamp || tenant.spec?.suspend) continue;
      try {
        const usage = await usageOf(name);
        if (!usage) continue;
        const hard = hardOfTenant(tenant);
        await samples.addSample({ tenant: name, at, used: formatHard(usage.total), hard: formatHard(hard) });
        written += 1;
      } catch (error) {
        log.warn("sampling a tenant's usage failed", { tenant: name, error });
      }
    }
    await samples.deleteSamplesBefore(new Date(at.getTime() - options.retentionMs));
    return written;
  };

  const sampleNow = () => {
    running ??= sampleOnce().finally(() => {
      running = undefined;
    });
    return running;
  };

  const timer = setInterval(() => {
    void sampleNow().catch((error: unknown) => log.warn("quota sampling failed", { error }));
  }, options.intervalMs);
  timer.unref();
  // A first sample right away: the charts have a point as soon as Ring0 runs.
  const first = setTimeout(() => void sampleNow().catch(() => undefined), 5_000);
  first.unref();

  return {
    sampleNow,
    stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(first);
    },
  };
}
