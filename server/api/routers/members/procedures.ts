import { tenantAdminProcedure as tenantAdminTier } from "@/server/api/trpc";

/** The tenant's admins (and operators) manage its members and accounts. */
export const tenantAdminProcedure = tenantAdminTier("manage its members and accounts");
