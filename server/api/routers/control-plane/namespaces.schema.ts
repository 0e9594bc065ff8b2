/**
 * Inputs of the portal's namespace procedures. Zod only (no server imports), so the forms validate
 * with the same rules and words before anything is sent.
 */
import { z } from "zod";

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A Namespace name: a DNS-1123 label of at most 63 characters, as the API server requires. */
export const namespaceName = z
  .string({ error: "expected a namespace name" })
  .trim()
  .min(1, "expected a namespace name")
  .max(63, "expected at most 63 characters")
  .regex(
    dns1123Label,
    "expected a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit",
  );

const tenant = z.string();

export const createNamespaceInput = z.object({ tenant, name: namespaceName });
export type CreateNamespaceInput = z.infer<typeof createNamespaceInput>;

/** Deleting a namespace deletes everything in it, so its name must be typed again. */
export const deleteNamespaceInput = z
  .object({ tenant, name: namespaceName, confirm: z.string({ error: "expected the namespace's name" }) })
  .refine((input) => input.confirm === input.name, {
    path: ["confirm"],
    message: "expected the namespace's name, typed exactly, to confirm",
  });
export type DeleteNamespaceInput = z.infer<typeof deleteNamespaceInput>;
