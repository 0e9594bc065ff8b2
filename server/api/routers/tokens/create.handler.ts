import type { Context } from "@/server/api/trpc";
import type { SessionUser } from "@/server/core/roles";
import { createTokenService } from "@/server/tokens/service";
import type { TokensCreateInput } from "./create.schema";

/** The plaintext goes back to the caller once; nothing can retrieve it later. */
export async function createToken(ctx: Context & { user: SessionUser }, input: TokensCreateInput) {
  const { plaintext, token } = await createTokenService({ db: ctx.db }).issueToken({
    user: ctx.user,
    ...input,
    requestId: ctx.requestId,
  });
  return { token: plaintext, id: token.id, prefix: token.prefix, expiresAt: token.expiresAt };
}
