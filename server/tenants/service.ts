/**
 * The operator's changes of tenants, each audited: create (the default quota template's limits and,
 * optionally, a first admin account), delete, suspend or resume, and upgrade. The Tenant object is
 * the intent; the reconciler (reconciler.ts) makes it so.
 */
import { type AuditActor, auditAs } from "@/server/audit/service";
import type { SessionUser } from "@/server/core/roles";
import { getDb } from "@/server/db/client";
import { NotFoundError } from "@/server/errors";
import { createAccountService, type NewAccount } from "@/server/iam/account-service";
import { createQuotaTemplateRepository } from "@/server/quotas/templates-repository";
import {
  type CreateTenantInput,
  createTenantResource,
  deleteTenantResource,
  setTenantSuspended,
  setTenantVersion,
} from "./tenant-resources";

/** The operator acting, in a request; without a database (test callers) the process-wide one. */
export type TenantActor = AuditActor & { user: SessionUser };

export type NewTenant = Omit<CreateTenantInput, "quota"> & {
  /** An embedded-IAM account made the tenant's admin once the Tenant exists. */
  firstAdmin?: Omit<NewAccount, "role">;
};

/**
 * Creates the Tenant with the default quota template's limits (if an operator chose one). An
 * account that cannot be made (external IAM, taken username) is refused before the Tenant exists;
 * the first admin's one-time password is in this answer only.
 */
export async function createTenant(actor: TenantActor, request: NewTenant) {
  const { firstAdmin, ...resource } = request;
  const db = actor.db ?? getDb();
  const accounts = createAccountService({ db });
  if (firstAdmin) accounts.assertCanCreate(firstAdmin.username);
  const template = await createQuotaTemplateRepository(db).findDefault();
  const quota = template ? { hard: template.hard, template: template.name } : undefined;
  const tenant = await createTenantResource({ ...resource, quota }, { name: actor.user.name });
  await auditAs(actor)({
    tenant: request.name,
    action: "tenant.create",
    targetKind: "Tenant",
    target: request.name,
    detail: {
      version: request.version,
      provisioner: request.provisioner,
      admins: request.admins,
      quota: quota ?? null,
    },
  });
  if (!firstAdmin) return { ...tenant, firstAdmin: null };
  const created = await accounts.create(
    actor.user,
    request.name,
    { ...firstAdmin, role: "tenant-admin" },
    actor.requestId ?? undefined,
  );
  return {
    ...tenant,
    firstAdmin: { username: created.account.username, temporaryPassword: created.temporaryPassword },
  };
}

/** Deleting a tenant takes its control plane and workloads with it. */
export async function deleteTenant(actor: TenantActor, name: string): Promise<{ name: string }> {
  if (!(await deleteTenantResource(name))) {
    throw new NotFoundError(`Tenant "${name}" was not found in the super cluster.`);
  }
  await auditAs(actor)({ tenant: name, action: "tenant.delete", targetKind: "Tenant", target: name });
  return { name };
}

/** Suspend stops the tenant's control plane (data kept); resume starts it again. */
export async function suspendTenant(actor: TenantActor, name: string, suspend: boolean) {
  const { tenant, wasSuspended } = await setTenantSuspended(name, suspend);
  await auditAs(actor)({
    tenant: name,
    action: suspend ? "tenant.suspend" : "tenant.resume",
    targetKind: "Tenant",
    target: name,
    detail: { wasSuspended },
  });
  return tenant;
}

/** Moves the control plane to another available Kubernetes version. */
export async function upgradeTenant(actor: TenantActor, name: string, version: string) {
  const { tenant, from } = await setTenantVersion(name, version);
  await auditAs(actor)({
    tenant: name,
    action: "tenant.upgrade",
    targetKind: "Tenant",
    target: name,
    detail: { from, to: tenant.version },
  });
  return tenant;
}
