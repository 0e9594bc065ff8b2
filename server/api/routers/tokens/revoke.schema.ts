import { z } from "zod";

export const tokensRevokeInput = z.object({
  id: z.string().min(1, "expected a token id").max(64, "expected a token id"),
});
export type TokensRevokeInput = z.infer<typeof tokensRevokeInput>;
