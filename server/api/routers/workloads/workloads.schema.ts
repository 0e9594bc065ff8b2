/**
 * Inputs of the portal's workloads procedures. Zod only (no server imports), so pages and forms
 * can validate with the same rules and words.
 */
import { z } from "zod";

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export const workloadNamespace = z
  .string({ error: "expected a namespace name" })
  .min(1, "expected a namespace name")
  .max(63, "expected at most 63 characters")
  .regex(dns1123Label, "expected a DNS-1123 label (lowercase letters, digits and '-')");

export const podName = z
  .string({ error: "expected a pod name" })
  .min(1, "expected a pod name")
  .max(253, "expected at most 253 characters")
  .regex(dns1123Subdomain, "expected a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')");

const tenant = z.string();

/** All namespaces the user may list, or only `namespace`. */
export const listPodsInput = z.object({ tenant, namespace: workloadNamespace.optional() });
export type ListPodsInput = z.infer<typeof listPodsInput>;

export const getPodInput = z.object({ tenant, namespace: workloadNamespace, name: podName });
export type GetPodInput = z.infer<typeof getPodInput>;
