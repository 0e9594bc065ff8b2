import { z } from "zod";
import { tenantNameField } from "@/server/core/tenant-name";

export const auditListInput = z.object({
  tenant: tenantNameField("expected a tenant name").optional(),
  action: z
    .string()
    .regex(/^[a-z0-9.-]{1,60}$/, "expected an action prefix such as auth.sign-in")
    .optional(),
  cursor: z.string().min(1).max(64).optional(),
  limit: z.number().int().min(1).max(200).default(50),
});
export type AuditListInput = z.infer<typeof auditListInput>;
