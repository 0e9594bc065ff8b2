import { createTRPCRouter, protectedProcedure } from "@/server/api/trpc";
import { createToken } from "./create.handler";
import { tokensCreateInput } from "./create.schema";
import { listTokens } from "./list.handler";
import { tokensListInput } from "./list.schema";
import { revokeToken } from "./revoke.handler";
import { tokensRevokeInput } from "./revoke.schema";

export const tokensRouter = createTRPCRouter({
  create: protectedProcedure.input(tokensCreateInput).mutation(({ ctx, input }) => createToken(ctx, input)),
  list: protectedProcedure.input(tokensListInput).query(({ ctx, input }) => listTokens(ctx, input)),
  revoke: protectedProcedure.input(tokensRevokeInput).mutation(({ ctx, input }) => revokeToken(ctx, input)),
});
