/**
 * A tenant's name: a DNS label (at most 63 lowercase letters, digits and dashes), because it names
 * Kubernetes objects, paths and URL segments. Pure and isomorphic: the browser's forms validate
 * with the same rule and wording as the API.
 */
import { z } from "zod";

export const tenantNamePattern = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The zod field for a tenant name in any input. */
export function tenantNameField(message = "expected a tenant name (lowercase letters, digits and dashes)") {
  return z.string({ error: message }).regex(tenantNamePattern, message);
}
