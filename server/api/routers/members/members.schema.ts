/** Inputs of the members procedures. Zod only, so the portal's forms validate with the same rules. */
import { z } from "zod";
import { assignableRole } from "@/server/core/account-fields";

const userId = z.string().min(1, "expected a user id").max(64, "expected a user id");

export const membersSetRoleInput = z.object({ userId, role: assignableRole });
export const membersInviteInput = z.object({
  username: z
    .string()
    .trim()
    .min(1, "expected the username (embedded IAM) or subject or email (external IAM) of the person")
    .max(200, "expected at most 200 characters"),
  role: assignableRole,
});
export const membersRemoveInput = z.object({ userId });
