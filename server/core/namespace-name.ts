/** A Namespace's name, as the API server takes it. Zod only, so the forms validate with the same words. */
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
