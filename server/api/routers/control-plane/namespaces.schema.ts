/** Inputs of the portal's namespace procedures; a namespace's name is server/core/namespace-name.ts. */
import { z } from "zod";
import { namespaceName } from "@/server/core/namespace-name";

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
