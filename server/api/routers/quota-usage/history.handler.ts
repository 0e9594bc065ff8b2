import type { Context } from "@/server/api/trpc";
import { quotaResourceInfo } from "@/server/core/quota-resources";
import { downsample, type HistoryPoint, samplePoints } from "./history";
import { createQuotaUsageRepository } from "./repository";
import type { HistoryInput } from "./schema";

export interface QuotaHistory {
  resource: HistoryInput["resource"];
  label: string;
  kind: "cpu" | "memory" | "count";
  from: Date;
  to: Date;
  /** How many samples the points summarise. */
  samples: number;
  points: HistoryPoint[];
}

export async function quotaHistory(
  ctx: Context,
  input: HistoryInput,
  now = new Date(),
): Promise<QuotaHistory> {
  const from = new Date(now.getTime() - input.sinceHours * 3_600_000);
  const rows = await createQuotaUsageRepository(ctx.db).samplesSince(input.tenant, from);
  const info = quotaResourceInfo(input.resource);
  return {
    resource: input.resource,
    label: info.label,
    kind: info.kind,
    from,
    to: now,
    samples: rows.length,
    points: downsample(samplePoints(rows, input.resource)),
  };
}
