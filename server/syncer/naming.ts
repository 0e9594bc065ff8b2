/**
 * Names of tenant objects in the super cluster (issue 5, seed 002): a tenant namespace `ns` of
 * tenant `t` becomes `<tenantPrefix(t)>-<ns>` in the super cluster.
 *
 * Why the mapping is collision-free by construction (the only collisions left are hash collisions):
 * - `tenantPrefix(t)` is always PREFIX_LENGTH (9) characters: "t" and 8 base32 characters (40 bits)
 *   of sha256(t). Because its length is fixed, the first 9 characters of a super namespace name
 *   determine the tenant: names of tenants with distinct prefixes can never be equal. Distinct
 *   tenants share a prefix only by a hash collision, which `assertUniquePrefixes` reports and
 *   `prefixRefusals` turns into the tenants the syncer refuses (all but the oldest of a group)
 *   instead of mixing two tenants' objects.
 * - After the prefix and "-" come at most 53 characters, the "rest", in one of two disjoint forms:
 *   - literal: a valid DNS-1123 label of at most 52 characters is kept as it is (length ≤ 52);
 *   - hashed: any other namespace (longer, or not a valid label) becomes a readable head (its first
 *     36 characters, lowercased, other characters replaced by "-"), "-", and a base32 sha256 of the
 *     full namespace padded out so the rest is exactly 53 characters (the hash is ≥ 16 characters,
 *     80 bits).
 *   A literal rest is never 53 characters long and a hashed one always is, so the two forms never
 *   meet; literal rests are the namespace itself, so they are injective; two hashed rests are equal
 *   only if their hashes agree, i.e. by a hash collision.
 * - The result is a DNS-1123 label of at most 63 characters: it starts with "t", contains only
 *   [a-z0-9-], ends with a literal label's last character or a hash character (both alphanumeric).
 *
 * Deleting and re-creating a tenant of the same name gives the same prefix; the syncer's labels
 * (syncLabels) and cleanup, not the name, tell a new tenant's objects from stale ones.
 */
import { createHash } from "node:crypto";
import type { Naming } from "./contracts";

/** Length of every tenant prefix. */
export const PREFIX_LENGTH = 9;
/** Kubernetes' limit for a namespace name (a DNS-1123 label). */
export const MAX_NAMESPACE_LENGTH = 63;
/** Characters left after `<prefix>-`; a hashed rest always uses all of them. */
const REST_LENGTH = MAX_NAMESPACE_LENGTH - PREFIX_LENGTH - 1;
/** The longest namespace kept literally: one shorter than a hashed rest, so the two never meet. */
export const MAX_LITERAL_NAMESPACE_LENGTH = REST_LENGTH - 1;
/** Characters of the original name kept readable in a hashed rest. */
const HASHED_HEAD_LENGTH = 36;

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const base32Alphabet = "0123456789abcdefghijklmnopqrstuv";

/** RFC 4648 base32hex, lowercase, unpadded: only [0-9a-v], so always DNS-label-safe. */
function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += base32Alphabet[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += base32Alphabet[(buffer << (5 - bits)) & 31];
  return out;
}

/** 52 base32 characters of sha256(value). */
function hash(value: string): string {
  return base32(createHash("sha256").update(value, "utf8").digest());
}

/** True if `value` is a valid DNS-1123 label (what Kubernetes requires of a namespace name). */
export function isDnsLabel(value: string): boolean {
  return value.length <= MAX_NAMESPACE_LENGTH && dnsLabel.test(value);
}

/** "t" followed by 8 base32 characters of sha256(tenant): fixed length, starts with a letter. */
export function tenantPrefix(tenant: string): string {
  return `t${hash(tenant).slice(0, PREFIX_LENGTH - 1)}`;
}

function namespaceRest(namespace: string): string {
  if (namespace.length <= MAX_LITERAL_NAMESPACE_LENGTH && dnsLabel.test(namespace)) return namespace;
  // Lowercase before slicing: toLowerCase can lengthen a string, and the head must stay ≤ 36.
  const head = namespace
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .slice(0, HASHED_HEAD_LENGTH);
  return `${head}-${hash(namespace).slice(0, REST_LENGTH - head.length - 1)}`;
}

/** The super-cluster namespace for `namespace` of `tenant` (see the module comment for why it is unique). */
export function superNamespace(tenant: string, namespace: string): string {
  return `${tenantPrefix(tenant)}-${namespaceRest(namespace)}`;
}

export const naming: Naming = { tenantPrefix, superNamespace };

export interface PrefixCollision {
  prefix: string;
  /** Two or more distinct tenants, sorted, that hash to `prefix`. */
  tenants: string[];
}

/**
 * Tenants whose prefixes collide (a 40-bit hash collision): the syncer must refuse to sync all but
 * one of each group, because their super-cluster namespaces would coincide. Empty when all are unique.
 */
export function assertUniquePrefixes(
  tenants: string[],
  prefixOf: (tenant: string) => string = tenantPrefix,
): PrefixCollision[] {
  const byPrefix = new Map<string, Set<string>>();
  for (const tenant of tenants) {
    const prefix = prefixOf(tenant);
    const group = byPrefix.get(prefix) ?? new Set<string>();
    group.add(tenant);
    byPrefix.set(prefix, group);
  }
  const collisions: PrefixCollision[] = [];
  for (const [prefix, group] of byPrefix) {
    if (group.size > 1) collisions.push({ prefix, tenants: [...group].sort() });
  }
  return collisions.sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
}

/** A tenant the syncer refuses to sync: its prefix is `owner`'s too. */
export interface PrefixRefusal {
  prefix: string;
  /** The tenant that keeps the prefix. */
  owner: string;
}

/**
 * The tenants the syncer must not sync because their prefix collides with another's. In each
 * colliding group the earliest-created tenant keeps the prefix (its namespaces may already be
 * below; name order breaks a tie) and every other is refused, so a new tenant can never take over
 * an existing tenant's super namespaces. `createdAt` is the Tenant's creationTimestamp (RFC 3339).
 */
export function prefixRefusals(
  tenants: readonly { name: string; createdAt?: string | Date }[],
  prefixOf: (tenant: string) => string = tenantPrefix,
): Map<string, PrefixRefusal> {
  const createdAt = new Map(tenants.map((tenant) => [tenant.name, tenant.createdAt]));
  const age = (tenant: string) => {
    const time = new Date(createdAt.get(tenant) ?? Number.NaN).getTime();
    return Number.isNaN(time) ? Number.POSITIVE_INFINITY : time;
  };
  const refusals = new Map<string, PrefixRefusal>();
  for (const { prefix, tenants: group } of assertUniquePrefixes(
    tenants.map((tenant) => tenant.name),
    prefixOf,
  )) {
    // The group is sorted by name, and the sort is stable: equal ages keep name order.
    const [owner, ...refused] = [...group].sort((a, b) => age(a) - age(b));
    for (const tenant of refused) refusals.set(tenant, { prefix, owner: owner ?? "" });
  }
  return refusals;
}
