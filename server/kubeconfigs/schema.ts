/** Inputs of kubeconfig issuing, shared by the tRPC procedure, the route handlers and the service. */
import { z } from "zod";
import { maxTokenLifetimeDays } from "@/server/tokens/policy";

export const expiresInDays = z.coerce
  .number({ error: "expected a number of days" })
  .int("expected a whole number of days")
  .min(1, "expected at least 1 day")
  .max(maxTokenLifetimeDays, `expected at most ${maxTokenLifetimeDays} days`);

export const kubeconfigRequest = z.object({
  expiresInDays: expiresInDays.default(30),
  name: z.string().trim().min(1, "expected a name").max(64, "expected at most 64 characters").optional(),
});
export type KubeconfigRequest = z.infer<typeof kubeconfigRequest>;

export const adminKubeconfigRequest = z.object({
  reason: z
    .string({ error: "expected a reason for the break-glass access" })
    .trim()
    .min(3, "expected at least 3 characters saying why")
    .max(500, "expected at most 500 characters"),
});
export type AdminKubeconfigRequest = z.infer<typeof adminKubeconfigRequest>;
