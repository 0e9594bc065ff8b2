import type { Context } from "@/server/api/trpc";
import { createAuditRepository } from "@/server/audit/repository";
import { auditScope, type SessionUser } from "@/server/core/roles";
import { ForbiddenError, NotFoundError } from "@/server/errors";
import type { AuditListInput } from "./list.schema";

/** Operators read every event; tenant admins their tenant's; other users none. */
export async function listAudit(ctx: Context & { user: SessionUser }, input: AuditListInput) {
  const scope = auditScope(ctx.user);
  if (!scope) throw new ForbiddenError("Only tenant admins and operators can read the audit log.");
  if ("tenant" in scope && input.tenant && input.tenant !== scope.tenant) {
    throw new NotFoundError(`Tenant "${input.tenant}" was not found.`);
  }
  const tenant = "tenant" in scope ? scope.tenant : input.tenant;
  return createAuditRepository(ctx.db).list({ ...input, tenant });
}
