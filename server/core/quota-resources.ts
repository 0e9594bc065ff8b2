/**
 * The resources a tenant quota limits, their aliases, and validation of `Tenant.spec.quota.hard`.
 *
 * Aliases are the ones Kubernetes' ResourceQuota treats as the same number, so a quota copied from
 * a ResourceQuota means the same here: `cpu`, `memory`, `storage` are `requests.*`, and
 * `count/services`, `count/persistentvolumeclaims`, `count/configmaps`, `count/secrets` are the
 * plain counts (their evaluators always charge both names 1). `count/pods` is refused, not
 * aliased: Kubernetes counts every stored pod there, finished ones included, whereas `pods` counts
 * only pods that have not finished.
 */
import { formatQuantity, NANO_PER_UNIT, parseQuantity, QuantityError, type QuantityKind } from "./quantity";

export const QUOTA_RESOURCES = [
  { name: "requests.cpu", kind: "cpu", label: "CPU requests" },
  { name: "requests.memory", kind: "memory", label: "Memory requests" },
  { name: "limits.cpu", kind: "cpu", label: "CPU limits" },
  { name: "limits.memory", kind: "memory", label: "Memory limits" },
  { name: "requests.storage", kind: "memory", label: "Storage requests" },
  { name: "pods", kind: "count", label: "Pods" },
  { name: "services", kind: "count", label: "Services" },
  { name: "persistentvolumeclaims", kind: "count", label: "Persistent volume claims" },
  { name: "configmaps", kind: "count", label: "Config maps" },
  { name: "secrets", kind: "count", label: "Secrets" },
  { name: "namespaces", kind: "count", label: "Namespaces" },
] as const satisfies readonly { name: string; kind: QuantityKind; label: string }[];

export type QuotaResource = (typeof QUOTA_RESOURCES)[number]["name"];

export interface QuotaResourceInfo {
  name: QuotaResource;
  kind: QuantityKind;
  label: string;
}

/** The resources in display order. */
export const quotaResourceNames: readonly QuotaResource[] = QUOTA_RESOURCES.map((resource) => resource.name);

const infoByName = new Map<string, QuotaResourceInfo>(
  QUOTA_RESOURCES.map((resource) => [resource.name, resource]),
);

/** Other names Kubernetes' ResourceQuota accepts for the same number. */
export const QUOTA_RESOURCE_ALIASES: Readonly<Record<string, QuotaResource>> = {
  cpu: "requests.cpu",
  memory: "requests.memory",
  storage: "requests.storage",
  "count/services": "services",
  "count/persistentvolumeclaims": "persistentvolumeclaims",
  "count/configmaps": "configmaps",
  "count/secrets": "secrets",
};

/** Limits per resource in nano-units (a count of 3 is 3_000_000_000n); absent means unlimited. */
export type QuotaHard = Partial<Record<QuotaResource, bigint>>;

export function isQuotaResource(name: string): name is QuotaResource {
  return infoByName.has(name);
}

export function quotaResourceInfo(name: QuotaResource): QuotaResourceInfo {
  return infoByName.get(name)!;
}

/** The resource a name (or alias) stands for; undefined for names Ring0 quotas do not support. */
export function canonicalResourceName(name: string): QuotaResource | undefined {
  if (isQuotaResource(name)) return name;
  return Object.hasOwn(QUOTA_RESOURCE_ALIASES, name) ? QUOTA_RESOURCE_ALIASES[name] : undefined;
}

/** What a bad entry of `hard` is and how to fix it. */
export interface HardError {
  /** The key as given (an alias stays an alias). */
  key: string;
  value: unknown;
  message: string;
}

export type ValidateHardResult = { ok: true; hard: QuotaHard } | { ok: false; errors: HardError[] };

const EXAMPLES: Record<QuantityKind, string> = {
  cpu: "500m or 2",
  memory: "512Mi or 4Gi",
  count: "10",
};

const SUPPORTED = `Ring0 quotas support ${quotaResourceNames.join(", ")} (and the aliases ${Object.keys(
  QUOTA_RESOURCE_ALIASES,
).join(", ")})`;

function unknownResourceMessage(key: string): string {
  if (key === "count/pods") {
    return "unknown resource 'count/pods': it counts finished pods too; use 'pods', which counts pods that have not finished";
  }
  return `unknown resource '${key}': ${SUPPORTED}`;
}

/**
 * Check a tenant quota's `hard` map and turn it into nano-units. All or nothing: any error gives
 * every error and no `hard`. Counts must be whole numbers (as Kubernetes requires of integer
 * resources), and nothing may be negative.
 */
export function validateHard(input: Record<string, unknown>): ValidateHardResult {
  const errors: HardError[] = [];
  const hard: QuotaHard = {};
  const givenAs = new Map<QuotaResource, string>();

  for (const [key, value] of Object.entries(input)) {
    const resource = canonicalResourceName(key);
    if (!resource) {
      errors.push({ key, value, message: unknownResourceMessage(key) });
      continue;
    }
    const earlier = givenAs.get(resource);
    if (earlier !== undefined) {
      errors.push({
        key,
        value,
        message: `${key}: ${resource} is already given as '${earlier}'; give it once`,
      });
      continue;
    }
    givenAs.set(resource, key);

    const { kind } = quotaResourceInfo(resource);
    const example = EXAMPLES[kind];
    if (typeof value !== "string") {
      errors.push({ key, value, message: `${key}: the limit must be a text such as "${example}"` });
      continue;
    }
    let nano: bigint;
    try {
      nano = parseQuantity(value, { allowNegative: true });
    } catch (error) {
      if (!(error instanceof QuantityError)) throw error;
      errors.push({
        key,
        value,
        message: `${key}: '${value}' is not a quantity (${error.reason}): use e.g. ${example}`,
      });
      continue;
    }
    if (nano < 0n) {
      errors.push({
        key,
        value,
        message: `${key}: '${value}' is negative: a limit is 0 or more, e.g. ${example}`,
      });
      continue;
    }
    if (kind === "count" && nano % NANO_PER_UNIT !== 0n) {
      errors.push({ key, value, message: `${key}: '${value}' is not a whole number: use e.g. ${example}` });
      continue;
    }
    hard[resource] = nano;
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, hard };
}

/**
 * Like validateHard, but the good entries are kept beside the errors: what a quota written with
 * kubectl still enforces, or what a form can check further while reporting the bad entries.
 */
export function validateHardKeepingGood(input: Record<string, unknown>): {
  hard: QuotaHard;
  errors: HardError[];
} {
  const checked = validateHard(input);
  if (checked.ok) return { hard: checked.hard, errors: [] };
  const bad = new Set(checked.errors.map((error) => error.key));
  const good = validateHard(Object.fromEntries(Object.entries(input).filter(([key]) => !bad.has(key))));
  return { hard: good.ok ? good.hard : {}, errors: checked.errors };
}

/** A resource's amount as people read it ("2", "1536Mi", "10"). */
export function formatResourceQuantity(resource: QuotaResource, nano: bigint): string {
  return formatQuantity(nano, quotaResourceInfo(resource).kind);
}

/** `hard` back as `spec.quota.hard` text, in display order. */
export function formatHard(hard: QuotaHard): Record<string, string> {
  const text: Record<string, string> = {};
  for (const resource of quotaResourceNames) {
    const nano = hard[resource];
    if (nano !== undefined) text[resource] = formatResourceQuantity(resource, nano);
  }
  return text;
}
