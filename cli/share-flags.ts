/**
 * The grant a person describes with flags, as the pieces of a SharingPolicy spec: grantees from
 * --to, rules from --allow with --namespace and --resource-name, the expiry from --expires or
 * --for. Only the shape is checked here, with messages naming the flag; the operator policy is the
 * server's to judge.
 */
import { tenantNamePattern } from "@/server/core/tenant-name";
import { type Grantee, type GrantRule, granteeRoleGroups, grantVerbs } from "@/server/sharing/types";
import { UsageError } from "./errors";

/** Named rule sets for the common cases: `--allow read-pods --allow logs`. */
export const allowPresets = {
  "read-pods": { verbs: ["get", "list", "watch"], resources: ["pods"] },
  logs: { verbs: ["get"], resources: ["pods/log"] },
  exec: { verbs: ["create", "get"], resources: ["pods/exec"] },
} as const satisfies Record<string, { verbs: string[]; resources: string[] }>;

/**
 * The API group of the namespaced resources people share most, so `--allow get:deployments` needs
 * no `:apps`. A resource not listed needs its group spelled out: a guessed core group would make a
 * grant that silently covers nothing.
 */
const apiGroupOfResource: Record<string, string> = {
  pods: "",
  services: "",
  endpoints: "",
  configmaps: "",
  secrets: "",
  persistentvolumeclaims: "",
  events: "",
  serviceaccounts: "",
  replicationcontrollers: "",
  limitranges: "",
  resourcequotas: "",
  podtemplates: "",
  deployments: "apps",
  replicasets: "apps",
  statefulsets: "apps",
  daemonsets: "apps",
  controllerrevisions: "apps",
  jobs: "batch",
  cronjobs: "batch",
  ingresses: "networking.k8s.io",
  networkpolicies: "networking.k8s.io",
  horizontalpodautoscalers: "autoscaling",
  poddisruptionbudgets: "policy",
  endpointslices: "discovery.k8s.io",
  leases: "coordination.k8s.io",
  roles: "rbac.authorization.k8s.io",
  rolebindings: "rbac.authorization.k8s.io",
};

const namespacePattern = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const resourcePattern = /^(\*|[a-z0-9][a-z0-9.-]*(\/[a-z]+)?)$/;
const apiGroupPattern = /^(\*|[a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/;
const verbList = grantVerbs.filter((verb) => verb !== "*").join(", ");

function words(text: string): string[] {
  return text
    .split(",")
    .map((word) => word.trim())
    .filter((word) => word !== "");
}

/**
 * `--to` values as grantees: `globex` (every user of the tenant), `globex:alice,bob` (those users),
 * `globex@members` (a role group: admins, members, viewers), or both `globex:alice@admins`. The
 * same tenant named twice is one grantee.
 */
export function parseGrantees(values: readonly string[]): Grantee[] {
  if (values.length === 0) {
    throw new UsageError(
      "--to: required (who gets access: <tenant>, <tenant>:<user>,… or <tenant>@members; repeatable)",
    );
  }
  const byTenant = new Map<string, { users: string[]; groups: string[]; whole: boolean }>();
  for (const value of values) {
    const match = /^([^:@]*)(?::([^@]*))?(?:@(.*))?$/.exec(value.trim());
    const tenant = match?.[1] ?? "";
    if (!match || !tenantNamePattern.test(tenant)) {
      throw new UsageError(
        `--to "${value}": expected <tenant>, <tenant>:<user>,<user> or <tenant>@<group> (a tenant name is lowercase letters, digits and dashes)`,
      );
    }
    const users = match[2] === undefined ? [] : words(match[2]);
    const groups = match[3] === undefined ? [] : words(match[3]);
    if (match[2] !== undefined && users.length === 0) {
      throw new UsageError(`--to "${value}": name the users after the colon, e.g. ${tenant}:alice,bob`);
    }
    if (match[3] !== undefined && groups.length === 0) {
      throw new UsageError(`--to "${value}": name a role group after @: ${granteeRoleGroups.join(", ")}`);
    }
    for (const user of users) {
      if (!/^[^\s:*@]{1,253}$/.test(user))
        throw new UsageError(`--to "${value}": "${user}" is not a user name`);
    }
    for (const group of groups) {
      if (!(granteeRoleGroups as readonly string[]).includes(group)) {
        throw new UsageError(
          `--to "${value}": "${group}" is not a role group; use ${granteeRoleGroups.join(", ")}`,
        );
      }
    }
    const whole = users.length === 0 && groups.length === 0;
    const seen = byTenant.get(tenant);
    if (seen && seen.whole !== whole) {
      throw new UsageError(
        `--to ${tenant}: given both as the whole tenant and as some of its users or groups; give one`,
      );
    }
    const entry = seen ?? { users: [], groups: [], whole };
    entry.users.push(...users.filter((user) => !entry.users.includes(user)));
    entry.groups.push(...groups.filter((group) => !entry.groups.includes(group)));
    byTenant.set(tenant, entry);
  }
  return [...byTenant].map(([tenant, { users, groups }]) => ({
    tenant,
    ...(users.length ? { users } : {}),
    ...(groups.length ? { groups } : {}),
  }));
}

/** One `--allow` value as rules without namespaces: one rule per API group its resources are in. */
export function parseAllow(value: string): Omit<GrantRule, "namespaces">[] {
  const preset = allowPresets[value.trim() as keyof typeof allowPresets];
  if (preset) return [{ apiGroups: [""], resources: [...preset.resources], verbs: [...preset.verbs] }];
  const parts = value.split(":");
  if (parts.length < 2 || parts.length > 3) {
    throw new UsageError(
      `--allow "${value}": expected <verbs>:<resources>[:<apiGroup>] (e.g. get,list,watch:pods) or a preset: ${Object.keys(allowPresets).join(", ")}`,
    );
  }
  const verbs = words(parts[0]!.toLowerCase());
  const resources = words(parts[1]!.toLowerCase());
  if (verbs.length === 0) throw new UsageError(`--allow "${value}": name at least one verb before the colon`);
  if (resources.length === 0) {
    throw new UsageError(`--allow "${value}": name at least one resource after the verbs, e.g. get:pods`);
  }
  for (const verb of verbs) {
    if (!(grantVerbs as readonly string[]).includes(verb)) {
      throw new UsageError(`--allow "${value}": unknown verb "${verb}"; use ${verbList}`);
    }
  }
  for (const resource of resources) {
    if (!resourcePattern.test(resource)) {
      throw new UsageError(
        `--allow "${value}": "${resource}" is not a resource (plural and lowercase, e.g. pods or pods/log)`,
      );
    }
  }
  const explicitGroup = parts[2]?.trim();
  if (explicitGroup !== undefined) {
    const apiGroup = explicitGroup === "core" ? "" : explicitGroup;
    if (apiGroup !== "" && !apiGroupPattern.test(apiGroup)) {
      throw new UsageError(
        `--allow "${value}": "${explicitGroup}" is not an API group (e.g. apps, batch, core)`,
      );
    }
    return [{ apiGroups: [apiGroup], resources, verbs }];
  }
  const byGroup = new Map<string, string[]>();
  for (const resource of resources) {
    const apiGroup = apiGroupOfResource[resource.split("/")[0]!];
    if (apiGroup === undefined) {
      throw new UsageError(
        `--allow "${value}": name the API group of "${resource}": ${parts[0]}:${resource}:<apiGroup> (core for the core group)`,
      );
    }
    byGroup.set(apiGroup, [...(byGroup.get(apiGroup) ?? []), resource]);
  }
  return [...byGroup].map(([apiGroup, grouped]) => ({ apiGroups: [apiGroup], resources: grouped, verbs }));
}

/** `--allow` values with the `--namespace` and `--resource-name` values every rule shares. */
export function parseRules(
  allow: readonly string[],
  namespaces: readonly string[],
  resourceNames: readonly string[] = [],
): GrantRule[] {
  if (allow.length === 0) {
    throw new UsageError(
      `--allow: required (what the grantees may do: <verbs>:<resources>[:<apiGroup>] or ${Object.keys(allowPresets).join(", ")}; repeatable)`,
    );
  }
  if (namespaces.length === 0) {
    throw new UsageError("--namespace: required (the namespaces the grant covers; repeatable)");
  }
  for (const namespace of namespaces) {
    if (!namespacePattern.test(namespace)) {
      throw new UsageError(
        `--namespace "${namespace}": expected a namespace name (lowercase letters, digits and dashes)`,
      );
    }
  }
  for (const name of resourceNames) {
    if (!name.trim() || name === "*")
      throw new UsageError(`--resource-name "${name}": expected an object's name`);
  }
  const uniqueNamespaces = [...new Set(namespaces)];
  const uniqueNames = [...new Set(resourceNames)];
  return allow.flatMap(parseAllow).map((rule) => ({
    namespaces: uniqueNamespaces,
    apiGroups: rule.apiGroups,
    resources: rule.resources,
    ...(uniqueNames.length ? { resourceNames: uniqueNames } : {}),
    verbs: rule.verbs,
  }));
}

const durationUnits = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** `--for 7d` (also w, h, m, and sums such as 1d12h) in milliseconds. */
export function parseDuration(text: string): number {
  const value = text.trim();
  if (!/^(\d+[wdhm])+$/.test(value)) {
    throw new UsageError(`--for "${text}": expected a duration such as 7d, 12h, 30m, 2w or 1d12h`);
  }
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+)([wdhm])/g)) {
    total += Number(amount) * durationUnits[unit as keyof typeof durationUnits];
  }
  if (total <= 0) throw new UsageError(`--for "${text}": expected a duration longer than zero`);
  return total;
}

/** The expiry from `--expires <date-time>` or `--for <duration>`, as an ISO string; none when neither. */
export function parseExpiry(
  options: { expires?: string | undefined; for?: string | undefined },
  now: Date,
): string | undefined {
  if (options.expires !== undefined && options.for !== undefined) {
    throw new UsageError("--expires, --for: give one of them (an end date-time or how long), not both");
  }
  if (options.for !== undefined) return new Date(now.getTime() + parseDuration(options.for)).toISOString();
  if (options.expires === undefined) return undefined;
  const text = options.expires.trim();
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const dateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text);
  const at = new Date(dateOnly ? `${text}T00:00:00Z` : text);
  if (!(dateOnly || dateTime) || Number.isNaN(at.getTime())) {
    throw new UsageError(
      `--expires "${options.expires}": expected a date-time with its zone, e.g. 2026-12-01T00:00:00Z (or a date, midnight UTC)`,
    );
  }
  if (at.getTime() <= now.getTime()) {
    throw new UsageError(
      `--expires "${options.expires}": that is in the past; give a later time or use --for 7d`,
    );
  }
  return at.toISOString();
}
