import { createTRPCRouter, protectedProcedure } from "@/server/api/trpc";
import { listAudit } from "./list.handler";
import { auditListInput } from "./list.schema";

export const auditRouter = createTRPCRouter({
  list: protectedProcedure.input(auditListInput).query(({ ctx, input }) => listAudit(ctx, input)),
});
