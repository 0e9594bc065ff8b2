/**
 * The fields of a person's account and role in a tenant. Zod only, so the portal's forms, the
 * create-tenant dialog and the procedures validate with the same rules and words.
 */
import { z } from "zod";
import { assignableRoles } from "@/server/core/roles";

export const assignableRole = z.enum(assignableRoles, {
  message: `expected one of ${assignableRoles.join(", ")}`,
});

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

/** An embedded-IAM account a tenant admin creates, with the role it gets. */
export const newAccountInput = z.object({ ...newAccountFields, role: assignableRole });
