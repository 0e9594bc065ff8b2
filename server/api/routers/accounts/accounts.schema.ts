/** Inputs of the embedded-IAM account procedures. Zod only (the portal and the create-tenant dialog reuse them). */
import { z } from "zod";
import { assignableRole } from "@/server/api/routers/members/members.schema";

export const accountUsername = z
  .string()
  .trim()
  .min(3, "expected at least 3 characters")
  .max(40, "expected at most 40 characters")
  .regex(
    /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/,
    "expected lowercase letters, digits, '.', '_' or '-', starting and ending with a letter or digit",
  );

export const accountName = z
  .string()
  .trim()
  .min(1, "expected a display name")
  .max(200, "expected at most 200 characters");

export const accountEmail = z.email("expected an email address").max(254, "expected at most 254 characters");

export const newAccountFields = { username: accountUsername, name: accountName, email: accountEmail };

export const accountsCreateInput = z.object({ ...newAccountFields, role: assignableRole });
export const accountsSetDisabledInput = z.object({
  username: accountUsername,
  disabled: z.boolean({ message: "expected true or false" }),
});
