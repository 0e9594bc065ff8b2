import { z } from "zod";
import type { Context } from "@/server/api/trpc";
import { auditScope, type SessionUser } from "@/server/core/roles";
import { tenantNameField } from "@/server/core/tenant-name";
import { ForbiddenError, NotFoundError } from "@/server/errors";
import { execTranscript, listExecSessions } from "@/server/streams/sessions-repository";

export const execSessionsInput = z.object({
  tenant: tenantNameField("expected a tenant name").optional(),
  cursor: z.string().min(1).max(64).optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const execTranscriptInput = z.object({ id: z.string().min(1).max(64) });

/** The tenant a reader is confined to (tenant admins), or undefined (operators, any tenant). */
function confinedTenant(user: SessionUser, requested: string | undefined): string | undefined {
  const scope = auditScope(user);
  if (!scope) throw new ForbiddenError("Only tenant admins and operators can read shell sessions.");
  if ("tenant" in scope) {
    if (requested && requested !== scope.tenant)
      throw new NotFoundError(`Tenant "${requested}" was not found.`);
    return scope.tenant;
  }
  return requested;
}

export function listSessions(ctx: Context & { user: SessionUser }, input: z.infer<typeof execSessionsInput>) {
  return listExecSessions(ctx.db, { ...input, tenant: confinedTenant(ctx.user, input.tenant) });
}

export async function readTranscript(
  ctx: Context & { user: SessionUser },
  input: z.infer<typeof execTranscriptInput>,
) {
  const tenant = confinedTenant(ctx.user, undefined);
  const found = await execTranscript(ctx.db, input.id);
  // A session of another tenant is as absent as one without a transcript.
  if (!found || (tenant !== undefined && found.tenant !== tenant)) {
    throw new NotFoundError("That shell session has no transcript (or does not exist).");
  }
  return found;
}
