/**
 * A tenant's quota as the API reads and writes it: `Tenant.spec.quota` in the super cluster (what
 * the admission webhook enforces), checked against what the tenant uses now (read fresh from its
 * control plane; the webhook's ledger when that cannot be read).
 */

import { hardOfTenant } from "@/server/admission/hard";
import { getQuotaAdmission } from "@/server/admission/start";
import { formatHard } from "@/server/core/quota-resources";
import { ConflictError, InvalidInputError, NotFoundError, QuotaExceededError } from "@/server/errors";
import { requireSuperCluster } from "@/server/k8s/live";
import { kubeRequest } from "@/server/k8s/transport";
import { logger } from "@/server/logger";
import { type TenantUsage, tenantUsageOf } from "@/server/quotas/tenant-usage";
import { compareHardToUsage } from "@/server/quotas/usage";
import {
  readTenant,
  replaceTenantQuota,
  type TenantQuotaSpec,
  type TenantResource,
  tenantsPath,
} from "@/server/tenants/tenant-resources";
import {
  belowUsageMessage,
  describeOverage,
  desiredHard,
  invalidQuotaMessage,
  type OverageText,
  overagesOf,
  overageText,
  previewQuota,
  type QuotaPreview,
} from "./quota-change";
import type { QuotaTemplateRepository } from "./templates-repository";

export interface TenantQuotaView {
  tenant: string;
  hard: Record<string, string>;
  template: string | null;
  /** What the tenant uses now; null when its control plane cannot be read (provisioning, suspended). */
  used: Record<string, string> | null;
  /** Resources usage is above the limit on (possible after a limit was lowered below usage). */
  over: OverageText[];
}

/** What the tenant uses now, or null when neither its control plane nor the webhook's ledger can say. */
export async function currentUsage(tenant: string): Promise<TenantUsage | null> {
  try {
    const usage = await tenantUsageOf(tenant);
    if (usage) return usage;
  } catch (error) {
    logger.warn("tenant usage could not be read from its control plane", { tenant, error });
  }
  const ledger = await getQuotaAdmission()
    ?.usage(tenant)
    .catch(() => undefined);
  return ledger ? { at: new Date(), total: ledger, namespaces: [], workloads: [] } : null;
}

export async function tenantQuota(tenant: string): Promise<TenantQuotaView> {
  const [resource, usage] = await Promise.all([readTenant(tenant), currentUsage(tenant)]);
  const hard = hardOfTenant(resource);
  return {
    tenant,
    hard: formatHard(hard),
    template: resource.spec?.quota?.template ?? null,
    used: usage ? formatHard(usage.total) : null,
    over: usage ? compareHardToUsage(hard, usage.total).map(overageText) : [],
  };
}

async function templateNamed(templates: QuotaTemplateRepository, name: string) {
  const template = await templates.find(name);
  if (!template) {
    const known = (await templates.list()).map((entry) => entry.name);
    throw new NotFoundError(
      `template: quota template "${name}" was not found${
        known.length ? `; there are ${known.join(", ")}` : "; create one first"
      }.`,
    );
  }
  return template;
}

export interface SetQuotaRequest {
  tenant: string;
  hard?: Record<string, unknown>;
  template?: string;
  allowBelowUsage: boolean;
}

export interface QuotaChange {
  before: TenantQuotaSpec | null;
  after: TenantQuotaSpec;
  used: Record<string, string> | null;
  /** Resources now over their limit (only with allowBelowUsage, or already over before). */
  over: OverageText[];
  /** What the operator should know: each resource now over, or that usage could not be checked. */
  warnings: string[];
}

/**
 * Validates the whole request first (every bad entry at once) and writes nothing unless it is all
 * good; limits below what the tenant uses are refused unless `allowBelowUsage`.
 */
export async function setTenantQuota(
  request: SetQuotaRequest,
  templates: QuotaTemplateRepository,
): Promise<QuotaChange> {
  const template = request.template ? await templateNamed(templates, request.template) : null;
  const desired = desiredHard(template, request.hard);
  if (!desired.ok) throw new InvalidInputError(invalidQuotaMessage(desired.errors));
  const resource = await readTenant(request.tenant);
  const usage = await currentUsage(request.tenant);
  const warnings: string[] = [];
  let over: OverageText[] = [];
  if (usage) {
    const { refused, alreadyOver } = overagesOf(hardOfTenant(resource), desired.hard, usage.total);
    if (refused.length > 0 && !request.allowBelowUsage) {
      throw new QuotaExceededError(belowUsageMessage(request.tenant, refused));
    }
    over = [...refused, ...alreadyOver].map(overageText);
    warnings.push(...over.map((entry) => `over quota: ${describeOverage(entry)}`));
  } else {
    warnings.push(
      `the usage of tenant "${request.tenant}" could not be read (its control plane is not serving), so the limits were not checked against it`,
    );
  }
  const after: TenantQuotaSpec = {
    hard: formatHard(desired.hard),
    ...(template ? { template: template.name } : {}),
  };
  await replaceTenantQuota(resource, after);
  return {
    before: resource.spec?.quota ?? null,
    after,
    used: usage ? formatHard(usage.total) : null,
    over,
    warnings,
  };
}

/** Removes spec.quota (the webhook is unregistered by the reconciler); resolves what it was. */
export async function clearTenantQuota(tenant: string): Promise<TenantQuotaSpec | null> {
  const resource = await readTenant(tenant);
  if (!resource.spec?.quota) return null;
  await replaceTenantQuota(resource, null);
  return resource.spec.quota;
}

export async function previewTenantQuota(
  tenant: string,
  hard: Record<string, unknown>,
): Promise<QuotaPreview & { tenant: string; current: Record<string, string> }> {
  const desired = desiredHard(null, hard);
  if (!desired.ok) throw new InvalidInputError(invalidQuotaMessage(desired.errors));
  const [resource, usage] = await Promise.all([readTenant(tenant), currentUsage(tenant)]);
  return { tenant, current: formatHard(hardOfTenant(resource)), ...previewQuota(desired.hard, usage) };
}

/** Template name → the Tenants whose quota was copied from it, read fresh from the super cluster. */
export async function tenantsByTemplate(): Promise<Map<string, string[]>> {
  const list = await kubeRequest<{ items?: TenantResource[] }>(requireSuperCluster(), {
    path: tenantsPath,
    timeoutMs: 15_000,
  });
  const users = new Map<string, string[]>();
  for (const tenant of list.items ?? []) {
    const template = tenant.spec?.quota?.template;
    if (template) users.set(template, [...(users.get(template) ?? []), tenant.metadata.name].sort());
  }
  return users;
}

/** Refuses to delete a template tenants' quotas name, listing them. */
export async function assertTemplateUnused(name: string): Promise<void> {
  const users = (await tenantsByTemplate()).get(name) ?? [];
  if (users.length > 0) {
    throw new ConflictError(
      `Quota template "${name}" is in use by ${users.length === 1 ? "tenant" : "tenants"} ${users.join(
        ", ",
      )}; set their quotas from another template (or explicit limits) first.`,
    );
  }
}
