import type { Context } from "@/server/api/trpc";
import type { SessionUser } from "@/server/core/roles";
import { createTokenService } from "@/server/tokens/service";
import type { TokensListInput } from "./list.schema";

/** Operators list every token, tenant admins their tenant's, others their own; never a hash. */
export function listTokens(ctx: Context & { user: SessionUser }, input: TokensListInput) {
  return createTokenService({ db: ctx.db }).listTokens({ user: ctx.user, tenant: input.tenant });
}
