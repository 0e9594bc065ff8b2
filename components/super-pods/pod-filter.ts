/**
 * The operator's pod list filters: namespace, tenant, node and free text. Pure; unit-tested.
 */

export interface SuperPodFilter {
  namespace: string;
  /** A tenant's name, `none` for the super cluster's own pods, or "" for all. */
  tenant: string;
  node: string;
  /** Matched case-insensitively against namespace/name, node and tenant. */
  text: string;
}

/** The `tenant` filter value for pods no tenant owns. */
export const noTenant = "none";

export const emptyFilter: SuperPodFilter = { namespace: "", tenant: "", node: "", text: "" };

interface FilterablePod {
  namespace: string;
  name: string;
  node: string | null;
  tenant: string | null;
}

export function filterSuperPods<T extends FilterablePod>(pods: readonly T[], filter: SuperPodFilter): T[] {
  const words = filter.text.toLowerCase().split(/\s+/).filter(Boolean);
  return pods.filter((pod) => {
    if (filter.namespace && pod.namespace !== filter.namespace) return false;
    if (filter.tenant === noTenant ? pod.tenant !== null : filter.tenant && pod.tenant !== filter.tenant)
      return false;
    if (filter.node && pod.node !== filter.node) return false;
    const haystack = `${pod.namespace}/${pod.name} ${pod.node ?? ""} ${pod.tenant ?? ""}`.toLowerCase();
    return words.every((word) => haystack.includes(word));
  });
}

/** The distinct values a filter's select offers, sorted. */
export function filterChoices(pods: readonly FilterablePod[]): { namespaces: string[]; tenants: string[] } {
  const namespaces = new Set<string>();
  const tenants = new Set<string>();
  for (const pod of pods) {
    namespaces.add(pod.namespace);
    if (pod.tenant) tenants.add(pod.tenant);
  }
  return { namespaces: [...namespaces].sort(), tenants: [...tenants].sort() };
}

/** The filter a link such as `/operator/pods?node=kwok-1` starts with (unknown keys ignored). */
export function filterFromSearch(search: Record<string, string | string[] | undefined>): SuperPodFilter {
  const one = (key: keyof SuperPodFilter) => {
    const value = search[key];
    return (typeof value === "string" ? value : (value?.[0] ?? "")).slice(0, 253);
  };
  return { namespace: one("namespace"), tenant: one("tenant"), node: one("node"), text: one("text") };
}

/** The list's URL with a filter (what the node page links to). */
export function superPodsHref(filter: Partial<SuperPodFilter>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filter)) if (value) params.set(key, value);
  const query = params.toString();
  return query ? `/operator/pods?${query}` : "/operator/pods";
}

/** A super-cluster pod's page (its logs and shell). */
export const superPodHref = (pod: { namespace: string; name: string }) =>
  `/operator/pods/${encodeURIComponent(pod.namespace)}/${encodeURIComponent(pod.name)}`;
