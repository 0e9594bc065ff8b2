import type { Context } from "@/server/api/trpc";
import type { SessionUser } from "@/server/core/roles";
import { createTokenService } from "@/server/tokens/service";
import type { TokensRevokeInput } from "./revoke.schema";

/** Idempotent; a token the caller may not see is NOT_FOUND, whether or not it exists. */
export function revokeToken(ctx: Context & { user: SessionUser }, input: TokensRevokeInput) {
  return createTokenService({ db: ctx.db }).revokeToken(input.id, ctx.user, ctx.requestId);
}
