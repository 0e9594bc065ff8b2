import { createTRPCRouter } from "@/server/api/trpc";
import { createAccountService } from "@/server/iam/account-service";
import { tenantAdminProcedure } from "../members/procedures";
import { accountsCreateInput, accountsSetDisabledInput } from "./accounts.schema";

/** Embedded-IAM accounts of a tenant; every procedure refuses with an external IAM. */
export const accountsRouter = createTRPCRouter({
  list: tenantAdminProcedure.query(({ ctx }) => createAccountService({ db: ctx.db }).list(ctx.tenant)),

  /** The temporary password is in this answer only: show it once, it is stored as a hash. */
  create: tenantAdminProcedure.input(accountsCreateInput).mutation(async ({ ctx, input }) => {
    const { account, temporaryPassword } = await createAccountService({ db: ctx.db }).create(
      ctx.user,
      ctx.tenant,
      input,
      ctx.requestId,
    );
    return { account, temporaryPassword };
  }),

  setDisabled: tenantAdminProcedure
    .input(accountsSetDisabledInput)
    .mutation(({ ctx, input }) =>
      createAccountService({ db: ctx.db }).setDisabled(
        ctx.user,
        ctx.tenant,
        input.username,
        input.disabled,
        ctx.requestId,
      ),
    ),
});
