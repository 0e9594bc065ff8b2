/**
 * Which labels and annotations of a tenant's objects reach the super cluster (issue 14). Keys in
 * the super cluster are instructions to its components: Ring0's own (`ring0.dev/tenant`, the sync
 * annotations), kwok's (`*.kwok.x-k8s.io`, simulated stages and exec), and Kubernetes' (Pod
 * Security labels, `scheduler.alpha.kubernetes.io/node-selector`, AppArmor annotations). A tenant
 * may write any key in its own control plane, so the syncer decides what passes:
 *   - keys in Ring0's and kwok's domains never pass on any object (Ring0 sets its own below);
 *   - a pod's labels pass otherwise (the tenant's Services select its pods by them below);
 *   - a pod's unprefixed annotations pass (private to the user by Kubernetes' convention: no
 *     component reads them, and the pod's Downward API shows them to it);
 *   - a pod's prefixed annotations and a namespace's labels pass only when the operator
 *     allow-lists them, and never in the Kubernetes domains; a namespace's annotations never pass.
 */

/** Domains (and their subdomains) whose keys tenants never set below. */
const ring0OwnedDomains = ["ring0.dev", "kwok.x-k8s.io"];
/** Domains Kubernetes' own components read keys of: never passed through an operator allow-list either. */
const kubernetesDomains = ["kubernetes.io", "k8s.io"];

/** The domain of a label or annotation key ("" for an unprefixed key like "app"). */
function domainOf(key: string): string {
  const slash = key.indexOf("/");
  return slash === -1 ? "" : key.slice(0, slash).toLowerCase();
}

function inDomains(key: string, domains: readonly string[]): boolean {
  const domain = domainOf(key);
  return domains.some((owned) => domain === owned || domain.endsWith(`.${owned}`));
}

/** A key only Ring0 (or kwok, for Ring0) writes in the super cluster. */
export function isRing0OwnedKey(key: string): boolean {
  return inDomains(key, ring0OwnedDomains);
}

/** A key no operator allow-list can pass: Ring0's, kwok's or Kubernetes' own. */
export function isReservedKey(key: string): boolean {
  return inDomains(key, ring0OwnedDomains) || inDomains(key, kubernetesDomains);
}

const keyPattern = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const domainWildcardPattern = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/\*$/;

/** Why `entry` cannot be an allow-list entry ("key" or "domain/*"), or null when it can. */
export function allowListEntryProblem(entry: string): string | null {
  if (!keyPattern.test(entry) && !domainWildcardPattern.test(entry)) {
    return `"${entry}" is neither a label or annotation key nor "<domain>/*"`;
  }
  if (isReservedKey(entry)) {
    return `"${entry}" is in a domain Ring0 or Kubernetes reads in the super cluster (ring0.dev, kwok.x-k8s.io, kubernetes.io, k8s.io); it can never pass`;
  }
  return null;
}

/** Whether an allow-list entry ("key", or "domain/*" for every key of that domain) names `key`. */
function allowListNames(entry: string, key: string): boolean {
  return entry.endsWith("/*") ? domainOf(key) === entry.slice(0, -2) : entry === key;
}

/** The string-valued entries of a tenant's label or annotation map (malformed values are dropped). */
function stringEntries(map: unknown): [string, string][] {
  if (map === null || typeof map !== "object" || Array.isArray(map)) return [];
  return Object.entries(map as Record<string, unknown>).filter(
    (entry): entry is [string, string] => typeof entry[1] === "string",
  );
}

/** The tenant's keys outside Ring0's and kwok's domains (labels of pods and every key of other kinds). */
export function withoutRing0OwnedKeys(map: unknown): Record<string, string> {
  return Object.fromEntries(stringEntries(map).filter(([key]) => !isRing0OwnedKey(key)));
}

/**
 * The tenant's keys outside every reserved domain (Ring0's, kwok's, Kubernetes'): for objects whose
 * Kubernetes annotations steer the super cluster's controllers (a claim's storage class or node).
 */
export function withoutReservedKeys(map: unknown): Record<string, string> {
  return Object.fromEntries(stringEntries(map).filter(([key]) => !isReservedKey(key)));
}

/** Only the tenant's keys an operator allow-list names, never reserved ones. */
export function allowListed(map: unknown, allowList: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    stringEntries(map).filter(
      ([key]) => !isReservedKey(key) && allowList.some((entry) => allowListNames(entry, key)),
    ),
  );
}

/** A pod's annotations below: its unprefixed keys, and the prefixed ones `allowList` names. */
export function podAnnotationsBelow(map: unknown, allowList: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    stringEntries(map).filter(
      ([key]) =>
        !isReservedKey(key) &&
        (domainOf(key) === "" || allowList.some((entry) => allowListNames(entry, key))),
    ),
  );
}
