/**
 * A tenant's default namespace share as the API reads and writes it: stored in the database, checked
 * against the tenant's quota (Tenant.spec.quota in the super cluster) when it is set.
 */
import { hardOfTenant } from "@/server/admission/hard";
import { formatHard } from "@/server/core/quota-resources";
import { InvalidInputError } from "@/server/errors";
import { invalidDefaultShareMessage, validateDefaultShare } from "@/server/quotas/default-share";
import type { DefaultShareRepository, DefaultShareRow } from "@/server/quotas/default-share-repository";
import { readTenant } from "@/server/tenants/tenant-resources";

export interface DefaultShareView {
  tenant: string;
  /** What each new namespace gets; null: no default share (a new namespace is bounded by the tenant quota alone). */
  hard: Record<string, string> | null;
  updatedBy: string | null;
  updatedAt: string | null;
}

export function defaultShareView(tenant: string, row: DefaultShareRow | null): DefaultShareView {
  return {
    tenant,
    hard: row ? row.hard : null,
    updatedBy: row?.updatedBy ?? null,
    updatedAt: row?.updatedAt.toISOString() ?? null,
  };
}

export interface DefaultShareChange {
  before: Record<string, string> | null;
  after: Record<string, string> | null;
  view: DefaultShareView;
}

/**
 * Sets (or with null clears) the tenant's default share. All or nothing: every bad entry is reported
 * at once, including a share above the tenant quota's limit for a resource.
 */
export async function setDefaultShare(
  repository: DefaultShareRepository,
  request: { tenant: string; hard: Record<string, unknown> | null; actor: string },
): Promise<DefaultShareChange> {
  const { tenant } = request;
  if (request.hard === null) {
    const before = await repository.clear(tenant);
    return { before: before?.hard ?? null, after: null, view: defaultShareView(tenant, null) };
  }
  const resource = await readTenant(tenant);
  const tenantHard = hardOfTenant(resource);
  const checked = validateDefaultShare(request.hard, tenantHard);
  if (!checked.ok) throw new InvalidInputError(invalidDefaultShareMessage(checked.errors));
  const { before, after } = await repository.set(tenant, formatHard(checked.hard), request.actor);
  return { before: before?.hard ?? null, after: after.hard, view: defaultShareView(tenant, after) };
}
