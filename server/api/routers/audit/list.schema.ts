import { z } from "zod";
import { tenantNamePattern } from "@/server/auth/roles";

export const auditListInput = z.object({
  tenant: z.string().regex(tenantNamePattern, "expected a tenant name").optional(),
  action: z
    .string()
    .regex(/^[a-z0-9.-]{1,60}$/, "expected an action prefix such as auth.sign-in")
    .optional(),
  cursor: z.string().min(1).max(64).optional(),
  limit: z.number().int().min(1).max(200).default(50),
});
export type AuditListInput = z.infer<typeof auditListInput>;
