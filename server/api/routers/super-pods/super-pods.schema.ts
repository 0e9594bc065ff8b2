/** Inputs of the operators' super-cluster pod procedures (zod only, so pages can validate too). */
import { z } from "zod";

export const superPodInput = z.object({
  namespace: z
    .string({ error: "expected a namespace name" })
    .min(1, "expected a namespace name")
    .max(63, "expected at most 63 characters")
    .regex(
      /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
      "expected a DNS-1123 label (lowercase letters, digits and '-')",
    ),
  name: z
    .string({ error: "expected a pod name" })
    .min(1, "expected a pod name")
    .max(253, "expected at most 253 characters")
    .regex(
      /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
      "expected a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')",
    ),
});
export type SuperPodInput = z.infer<typeof superPodInput>;
