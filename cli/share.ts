/**
 * `ring0 share`: the arguments and flags of create, revoke and list as the sharing procedures'
 * input, checked against the server's own input schema before sending, with messages naming the
 * flag. The grant's pieces come from ./share-flags.ts; the operator policy is the server's to
 * judge (its refusal is printed as it comes). Grants as tables are ./share-table.ts.
 */

import type { z } from "zod";
import { createGrantSchema, grantOfTenantSchema } from "@/server/api/routers/sharing/sharing.schema";
import { UsageError } from "./errors";
import { parseExpiry, parseGrantees, parseRules } from "./share-flags";

type Options = Record<string, string | boolean | string[] | undefined>;

const strings = (value: Options[string]): string[] =>
  Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
const single = (value: Options[string]): string | undefined =>
  typeof value === "string" ? value : undefined;

/** The flag or argument a person typed for each field of the sharing procedures' input. */
function flagOf(path: readonly PropertyKey[]): string {
  const [field, , part] = path.map(String);
  if (field === "tenant") return "<owner-tenant>";
  if (field === "name") return "<name>";
  if (field === "grantees") return "--to";
  if (field === "rules") {
    if (part === "namespaces") return "--namespace";
    if (part === "resourceNames") return "--resource-name";
    return "--allow";
  }
  if (field === "expiresAt") return "--expires";
  return field === "purpose" ? "--purpose" : path.join(".");
}

/** The server's own input schema, checked before sending: the same limits, named by flag. */
function validInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new UsageError(
    parsed.error.issues.map((issue) => `${flagOf(issue.path)}: ${issue.message}`).join("; "),
  );
}

export type ShareCreateInput = z.output<typeof createGrantSchema>;

/** `ring0 share create`'s arguments and flags as sharing.create's input, or the first thing to fix. */
export function parseShareCreate(
  args: Record<string, string>,
  options: Options,
  now: Date,
): ShareCreateInput {
  const { tenant, name } = validInput(createGrantSchema.pick({ tenant: true, name: true }), {
    tenant: args["owner-tenant"],
    name: args.name,
  });
  const grantees = parseGrantees(strings(options.to));
  const rules = parseRules(
    strings(options.allow),
    strings(options.namespace),
    strings(options["resource-name"]),
  );
  const expiresAt = parseExpiry({ expires: single(options.expires), for: single(options.for) }, now);
  const purpose = single(options.purpose)?.trim();
  if (!purpose) {
    throw new UsageError(
      '--purpose: required (say what the access is for, e.g. --purpose "debug checkout latency")',
    );
  }
  return validInput(createGrantSchema, {
    tenant,
    name,
    grantees,
    rules,
    ...(expiresAt ? { expiresAt } : {}),
    purpose,
  });
}

/** `ring0 share revoke <owner-tenant> <name>`: the grant by its short or full name. */
export function parseShareRevoke(args: Record<string, string>): z.output<typeof grantOfTenantSchema> {
  return validInput(grantOfTenantSchema, { tenant: args["owner-tenant"], name: args.name });
}

/** `ring0 share list [<owner-tenant>] [--shared-with-me]`: exactly one of them. */
export function parseShareList(
  args: Record<string, string>,
  options: Options,
): { sharedWithMe: true } | { sharedWithMe: false; tenant: string } {
  const owner = args["owner-tenant"];
  if (options["shared-with-me"] === true) {
    if (owner !== undefined) {
      throw new UsageError(
        `--shared-with-me: lists what others share with you; leave out <owner-tenant> ("${owner}")`,
      );
    }
    return { sharedWithMe: true };
  }
  if (owner === undefined) {
    throw new UsageError(
      "<owner-tenant>: required (whose grants to list), or --shared-with-me for what others share with you",
    );
  }
  const { tenant } = validInput(grantOfTenantSchema.pick({ tenant: true }), { tenant: owner });
  return { sharedWithMe: false, tenant };
}
