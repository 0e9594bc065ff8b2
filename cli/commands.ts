/**
 * What each command does: resolve the connection, validate input (zod, messages naming the flag),
 * call the API, print. Commands return text for stdout; errors are thrown (errors.ts).
 */

import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { createTenantSchema } from "@/server/core/new-tenant";
import { tenantNamePattern } from "@/server/core/tenant-name";
import { maxTokenLifetimeDays } from "@/server/tokens/policy";
import type { CommandName, GlobalFlags } from "./args";
import { type Connection, createRing0Client, describeClientError, type Ring0Client } from "./client";
import { configPath, readConfig, writeConfig } from "./config";
import { CommandError, UsageError } from "./errors";
import { age, type Column, render, renderJson, renderTable } from "./output";
import { parseShareCreate, parseShareList, parseShareRevoke } from "./share";
import { grantColumns, sharedWithMeColumns } from "./share-table";

export interface CommandIo {
  env: Record<string, string | undefined>;
  /** Whatever was piped in (login reads a token from it), or null when stdin is a terminal. */
  readStdin: () => Promise<string | null>;
  fetch?: typeof fetch;
  now?: () => Date;
}

export interface Invocation {
  command: CommandName;
  args: Record<string, string>;
  options: Record<string, string | boolean | string[] | undefined>;
  global: GlobalFlags;
  outputFile?: string;
  rest?: string[];
}

/** What a command leaves for main to print, and the connection it used (for error messages). */
export interface CommandResult {
  stdout: string;
}

const url = z
  .url({ error: "--url: expected an absolute URL such as https://ring0.example.com" })
  .refine((value) => /^https?:\/\//.test(value), "--url: expected an http or https URL")
  .transform((value) => value.replace(/\/+$/, ""));
const token = z
  .string()
  .trim()
  .regex(
    /^r0_[0-9A-Za-z]{43}$/,
    "--token: expected a Ring0 API token (r0_ followed by 43 letters and digits)",
  );
const tenant = (flag: string) =>
  z
    .string()
    .regex(tenantNamePattern, `${flag}: expected a tenant name (lowercase letters, digits and dashes)`);
const expiresInDays = z.coerce
  .number({ error: "--expires-in-days: expected a number of days" })
  .int("--expires-in-days: expected a whole number of days")
  .min(1, "--expires-in-days: expected at least 1 day")
  .max(maxTokenLifetimeDays, `--expires-in-days: expected at most ${maxTokenLifetimeDays} days`);
const templateName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "--template: expected a quota template name")
  .max(63, "--template: expected at most 63 characters");
const tokenId = z.string().min(1, "<id>: expected a token id").max(64, "<id>: expected a token id");

function valid<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new UsageError(result.error.issues.map((issue) => issue.message).join("; "));
  return result.data;
}

/** Flags, then $RING0_URL/$RING0_TOKEN, then the stored login. */
export function resolveConnection(global: GlobalFlags, io: CommandIo): Connection {
  const stored = readConfigOrExplain(configPath(io.env));
  const rawUrl = global.url ?? io.env.RING0_URL ?? stored?.url;
  const rawToken = global.token ?? io.env.RING0_TOKEN ?? stored?.token;
  if (!rawUrl || !rawToken) {
    throw new CommandError(
      "not logged in: run `ring0 login --url <url> --token <r0_…>` (or pass --url and --token)",
    );
  }
  return { url: valid(url, rawUrl), token: valid(token, rawToken) };
}

function readConfigOrExplain(file: string) {
  try {
    return readConfig(file);
  } catch (error) {
    throw new CommandError((error as Error).message);
  }
}

export async function runCommand(invocation: Invocation, io: CommandIo): Promise<CommandResult> {
  if (invocation.command === "login") return login(invocation, io);
  const connection = resolveConnection(invocation.global, io);
  const client = createRing0Client(connection, io.fetch);
  return handlers[invocation.command](client, invocation, io);
}

async function login({ global }: Invocation, io: CommandIo): Promise<CommandResult> {
  const file = configPath(io.env);
  const stored = readConfigOrExplain(file);
  const rawUrl = global.url ?? io.env.RING0_URL ?? stored?.url;
  if (!rawUrl) throw new UsageError("--url: required (Ring0's URL, e.g. https://ring0.example.com)");
  let rawToken = global.token ?? io.env.RING0_TOKEN;
  if (rawToken === undefined) rawToken = (await io.readStdin())?.trim() || undefined;
  if (!rawToken) throw new UsageError("--token: required (or pipe the token on stdin, or set RING0_TOKEN)");
  const connection = { url: valid(url, rawUrl), token: valid(token, rawToken) };
  let me: Awaited<ReturnType<Ring0Client["me"]["get"]["query"]>>;
  try {
    me = await createRing0Client(connection, io.fetch).me.get.query();
  } catch (error) {
    const described = describeClientError(error, connection.url);
    if (described) throw new CommandError(`login failed: ${described.message}`);
    throw error;
  }
  writeConfig(file, connection);
  if (global.output === "json")
    return { stdout: renderJson({ url: connection.url, user: me, config: file }) };
  return {
    stdout: `Logged in to ${connection.url} as ${me.name} (${me.role}, tenant ${me.tenant}). Saved to ${file}.\n`,
  };
}

type TenantRow = Awaited<ReturnType<Ring0Client["tenants"]["resources"]["query"]>>[number];
type TokenRow = Awaited<ReturnType<Ring0Client["tokens"]["list"]["query"]>>[number];

function tenantColumns(now: Date): Column<TenantRow>[] {
  return [
    { header: "NAME", value: (row) => row.name },
    { header: "DISPLAY NAME", value: (row) => row.displayName },
    { header: "PROVISIONER", value: (row) => row.provisioner },
    { header: "VERSION", value: (row) => row.version },
    { header: "PHASE", value: (row) => row.phase },
    { header: "READY", value: (row) => row.ready },
    { header: "AGE", value: (row) => age(row.createdAt, now) },
  ];
}

export function tokenStatus(row: Pick<TokenRow, "revokedAt" | "expiresAt">, now: Date): string {
  if (row.revokedAt) return "revoked";
  return new Date(row.expiresAt).getTime() <= now.getTime() ? "expired" : "active";
}

function tokenColumns(now: Date): Column<TokenRow>[] {
  return [
    { header: "ID", value: (row) => row.id },
    { header: "NAME", value: (row) => row.name },
    { header: "TENANT", value: (row) => row.tenant },
    { header: "OWNER", value: (row) => row.ownerName },
    { header: "PREFIX", value: (row) => row.prefix },
    { header: "STATUS", value: (row) => tokenStatus(row, now) },
    { header: "EXPIRES", value: (row) => row.expiresAt },
    { header: "LAST USED", value: (row) => (row.lastUsedAt ? `${age(row.lastUsedAt, now)} ago` : null) },
  ];
}

type QuotaView = Awaited<ReturnType<Ring0Client["quotas"]["get"]["query"]>>;
type QuotaRow = { resource: string; used: string | null; limit: string; over: boolean };

const quotaColumns: Column<QuotaRow>[] = [
  { header: "RESOURCE", value: (row) => row.resource },
  { header: "USED", value: (row) => row.used },
  { header: "LIMIT", value: (row) => row.limit },
  { header: "STATUS", value: (row) => (row.used === null ? null : row.over ? "over" : "ok") },
];

/** A quota as people read it: the template, then a line per limited resource with its usage. */
export function renderQuota(view: Omit<QuotaView, "tenant"> & { tenant: string }): string {
  const resources = Object.keys(view.hard);
  if (resources.length === 0) return `Tenant ${view.tenant} has no quota.\n`;
  const over = new Set(view.over.map((entry) => entry.resource as string));
  const rows = resources.map((resource) => ({
    resource,
    used: view.used ? (view.used[resource] ?? "0") : null,
    limit: view.hard[resource]!,
    over: over.has(resource),
  }));
  const lines = [`Tenant:    ${view.tenant}`, `Template:  ${view.template ?? "-"}`, ""];
  const note =
    view.used === null ? "Usage unknown: the tenant's control plane is not serving right now.\n" : "";
  return `${lines.join("\n")}\n${renderTable(rows, quotaColumns)}${note}`;
}

type DefaultShareView = Awaited<ReturnType<Ring0Client["quotas"]["defaults"]["get"]["query"]>>;

/** A tenant's default namespace share as people read it: a line per resource, or that there is none. */
export function renderDefaultShare(view: DefaultShareView): string {
  if (!view.hard || Object.keys(view.hard).length === 0) {
    return `Tenant ${view.tenant} has no default share: a new namespace is bounded by the tenant quota alone.\n`;
  }
  const rows = Object.entries(view.hard).map(([resource, limit]) => ({ resource, limit }));
  const header = [
    `Tenant:      ${view.tenant}`,
    `Updated by:  ${view.updatedBy ?? "-"}${view.updatedAt ? ` at ${view.updatedAt}` : ""}`,
    "",
    "Each new namespace without a ResourceQuota gets a default-share ResourceQuota with:",
  ];
  return `${header.join("\n")}\n${renderTable(rows, [
    { header: "RESOURCE", value: (row) => row.resource },
    { header: "LIMIT", value: (row) => row.limit },
  ])}`;
}

/** `resource=quantity` arguments as the hard map; the server judges names and quantities. */
export function parseLimits(words: readonly string[]): Record<string, string> {
  const hard: Record<string, string> = {};
  for (const word of words) {
    const at = word.indexOf("=");
    if (at <= 0) {
      throw new UsageError(`"${word}": expected resource=quantity, e.g. requests.cpu=2 or pods=20`);
    }
    const resource = word.slice(0, at).trim();
    if (Object.hasOwn(hard, resource))
      throw new UsageError(`${resource}: given twice; give each resource once`);
    hard[resource] = word.slice(at + 1).trim();
  }
  return hard;
}

/** createTenantSchema's fields as the flags a person typed. */
const tenantFlags: Record<string, string> = {
  name: "<name>",
  displayName: "--display-name",
  provisioner: "--provisioner",
  version: "--version",
  admins: "--admin",
};

type Handler = (client: Ring0Client, invocation: Invocation, io: CommandIo) => Promise<CommandResult>;

const handlers: Record<Exclude<CommandName, "login">, Handler> = {
  async "tenants list"(client, { global }, io) {
    const rows = await client.tenants.resources.query();
    if (global.output === "table" && rows.length === 0) return { stdout: "No tenants.\n" };
    return { stdout: render(global.output, rows, tenantColumns(io.now?.() ?? new Date())) };
  },

  async "tenants create"(client, { args, options, global }) {
    const input = {
      name: args.name,
      displayName: options["display-name"],
      provisioner: options.provisioner,
      version: options.version ?? "1.36",
      admins: options.admin ?? [],
    };
    if (input.displayName === undefined) throw new UsageError("--display-name: required");
    const parsed = createTenantSchema.safeParse(input);
    if (!parsed.success) {
      throw new UsageError(
        parsed.error.issues
          .map((issue) => `${tenantFlags[String(issue.path[0])] ?? issue.path.join(".")}: ${issue.message}`)
          .join("; "),
      );
    }
    const created = await client.tenants.create.mutate(parsed.data);
    if (global.output === "json") return { stdout: renderJson(created) };
    return { stdout: `tenant/${parsed.data.name} created\n` };
  },

  async "tenants delete"(client, { args, options, global }) {
    const name = valid(tenant("<name>"), args.name);
    if (options.yes !== true) {
      throw new UsageError(
        `refusing to delete tenant "${name}" (its control plane and workloads go with it) without --yes`,
      );
    }
    const deleted = await client.tenants.delete.mutate({ name, confirm: name });
    if (global.output === "json") return { stdout: renderJson(deleted) };
    return { stdout: `tenant/${name} deleted\n` };
  },

  async kubeconfig(client, { args, options, outputFile }) {
    const name = valid(tenant("<tenant>"), args.tenant);
    const days =
      options["expires-in-days"] === undefined ? 30 : valid(expiresInDays, options["expires-in-days"]);
    const { kubeconfig } = await client.kubeconfigs.issue.mutate({ tenant: name, expiresInDays: days });
    if (outputFile === undefined) return { stdout: kubeconfig };
    const file = path.resolve(outputFile);
    try {
      fs.writeFileSync(file, kubeconfig, { mode: 0o600 });
      fs.chmodSync(file, 0o600);
    } catch (error) {
      throw new CommandError(`cannot write ${file}: ${(error as Error).message}`);
    }
    return {
      stdout: `Wrote ${file} (context "${name}", token valid ${days} days). Use it with: kubectl --kubeconfig ${file} get ns\n`,
    };
  },

  async "tokens list"(client, { options, global }, io) {
    const filter = options.tenant === undefined ? undefined : valid(tenant("--tenant"), options.tenant);
    const rows = await client.tokens.list.query(filter ? { tenant: filter } : {});
    if (global.output === "table" && rows.length === 0) return { stdout: "No API tokens.\n" };
    return { stdout: render(global.output, rows, tokenColumns(io.now?.() ?? new Date())) };
  },

  async "quota get"(client, { args, global }) {
    const name = valid(tenant("<tenant>"), args.tenant);
    const view = await client.quotas.get.query({ tenant: name });
    return { stdout: global.output === "json" ? renderJson(view) : renderQuota(view) };
  },

  async "quota set"(client, { args, options, rest, global }) {
    const name = valid(tenant("<tenant>"), args.tenant);
    const template = options.template === undefined ? undefined : valid(templateName, options.template);
    const hard = parseLimits(rest ?? []);
    if (template === undefined && Object.keys(hard).length === 0) {
      throw new UsageError(
        "expected --template <name> and/or resource=quantity limits, e.g. requests.cpu=2 pods=20",
      );
    }
    const result = await client.quotas.set.mutate({
      tenant: name,
      ...(Object.keys(hard).length > 0 ? { hard } : {}),
      ...(template !== undefined ? { template } : {}),
      allowBelowUsage: options["allow-below-usage"] === true,
    });
    if (global.output === "json") return { stdout: renderJson(result) };
    const warnings = result.warnings.map((warning) => `Warning: ${warning}\n`).join("");
    return {
      stdout: `tenant/${name} quota set${result.template ? ` from template ${result.template}` : ""}\n\n${renderQuota(result)}${warnings}`,
    };
  },

  async "quota default-share"(client, { args, options, rest, global }) {
    const name = valid(tenant("<tenant>"), args.tenant);
    const hard = parseLimits(rest ?? []);
    const clear = options.clear === true;
    if (clear && Object.keys(hard).length > 0) {
      throw new UsageError("--clear: give either --clear or resource=quantity limits, not both");
    }
    if (!clear && Object.keys(hard).length === 0) {
      const view = await client.quotas.defaults.get.query({ tenant: name });
      return { stdout: global.output === "json" ? renderJson(view) : renderDefaultShare(view) };
    }
    const result = await client.quotas.defaults.set.mutate({ tenant: name, hard: clear ? null : hard });
    if (global.output === "json") return { stdout: renderJson(result) };
    return {
      stdout: `tenant/${name} default share ${clear ? "cleared" : "set"}\n\n${renderDefaultShare(result)}`,
    };
  },

  async "share create"(client, { args, options, global }, io) {
    const input = parseShareCreate(args, options, io.now?.() ?? new Date());
    const grant = await client.sharing.create.mutate(input);
    if (global.output === "json") return { stdout: renderJson(grant) };
    const state =
      grant.state === "Active" ? "active now" : `${grant.state}: ${grant.message || "not active yet"}`;
    return { stdout: `grant ${grant.name} created (${state})\n` };
  },

  async "share list"(client, { args, options, global }, io) {
    const which = parseShareList(args, options);
    const now = io.now?.() ?? new Date();
    if (which.sharedWithMe) {
      const shared = await client.sharedWithMe.list.query();
      if (global.output === "table" && shared.length === 0) {
        return { stdout: "No other tenant shares anything with you.\n" };
      }
      return { stdout: render(global.output, shared, sharedWithMeColumns()) };
    }
    const { grants } = await client.sharing.list.query({ tenant: which.tenant });
    if (global.output === "table" && grants.length === 0) {
      return { stdout: `Tenant ${which.tenant} shares nothing.\n` };
    }
    return { stdout: render(global.output, grants, grantColumns(now)) };
  },

  async "share revoke"(client, { args, global }) {
    const grant = await client.sharing.revoke.mutate(parseShareRevoke(args));
    if (global.output === "json") return { stdout: renderJson(grant) };
    return { stdout: `grant ${grant.name} revoked\n` };
  },

  async "tokens revoke"(client, { args, global }) {
    const id = valid(tokenId, args.id);
    const revoked = await client.tokens.revoke.mutate({ id });
    if (global.output === "json") return { stdout: renderJson(revoked) };
    return { stdout: `token ${revoked.prefix}… (${revoked.name}) revoked\n` };
  },
};
