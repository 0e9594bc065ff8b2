/**
 * A pod's resolver below (pure): a ClusterFirst pod (the default) asks the pods' DNS server, which
 * answers it as its own tenant (server/cluster/real-node/pod-dns.ts), with its tenant namespace's
 * search path, as a kubelet of the tenant's own cluster would write it. The tenant's own
 * `dnsConfig` is kept after Ring0's entries; a pod with `dnsPolicy: None` or `Default` keeps its own.
 */
import type { Json } from "./synced-kinds";

export const CLUSTER_DOMAIN = "cluster.local";
/** As many nameservers as a resolver reads. */
const MAX_NAMESERVERS = 3;

export function withTenantDns(spec: Json, podDns: string | undefined, namespace: string | undefined): Json {
  const policy = spec.dnsPolicy ?? "ClusterFirst";
  if (!podDns || !namespace || (policy !== "ClusterFirst" && policy !== "ClusterFirstWithHostNet"))
    return spec;
  const own = (spec.dnsConfig ?? {}) as { nameservers?: unknown; searches?: unknown; options?: unknown };
  const list = (value: unknown) => (Array.isArray(value) ? value : []);
  const searches = [`${namespace}.svc.${CLUSTER_DOMAIN}`, `svc.${CLUSTER_DOMAIN}`, CLUSTER_DOMAIN];
  const options = list(own.options) as { name?: unknown }[];
  return {
    ...spec,
    dnsPolicy: "None",
    dnsConfig: {
      nameservers: [podDns, ...list(own.nameservers).filter((entry) => entry !== podDns)].slice(
        0,
        MAX_NAMESERVERS,
      ),
      searches: [...searches, ...list(own.searches).filter((entry) => !searches.includes(entry as string))],
      options: [
        ...(options.some((option) => option?.name === "ndots") ? [] : [{ name: "ndots", value: "5" }]),
        ...options,
      ],
    },
  };
}
