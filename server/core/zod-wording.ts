/** How Ring0 words invalid input, everywhere it validates with zod. Pure and isomorphic. */
import type { ZodError } from "zod";

/** "tenant: Invalid string …; limit: Too big …" — names each field a caller must fix. */
export function describeZodError(error: ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "input"}: ${issue.message}`)
    .join("; ");
}
