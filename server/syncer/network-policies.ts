/**
 * A tenant's NetworkPolicies below (pure; issue 18), for kube-router on the real nodes
 * (server/cluster/real-node/network-policy.ts). A policy lives in its namespace's super namespace
 * and selects pods by the labels they keep below. A peer's namespace selector is the tenant's: it
 * is rewritten to the mirrored labels every super namespace carries of its tenant namespace
 * (`ns.ring0.dev/<hash of the key>`, namespaceLabelsBelow) and confined to the tenant's own super
 * namespaces, so it can never select another tenant's namespaces or the super cluster's. Whatever a
 * policy allows, the wall between tenants (server/cluster/real-node/tenant-wall.ts) drops traffic
 * between tenants first: a policy only narrows.
 *
 * Where no such wall runs (Ring0 in a cluster, or a super cluster of the operator's), NetworkPolicies
 * are the wall. They only ever add up (a pod admits what any policy selecting it admits), so one
 * broad "the tenant's own pods may come in" policy would void every narrower rule a tenant writes.
 * Ring0 therefore writes three policies into each super namespace (boundaryPolicies):
 *   ring0-tenant-floor    every pod: in only from the tenant's API server pods, out only to the
 *                         cluster's DNS. No pod
 *                         is ever selected by no policy (which would admit everything), whatever
 *                         the order in which the syncer writes pods and policies.
 *   ring0-tenant-ingress  pods no tenant ingress policy selects: in from the tenant's own pods and
 *                         from the tenants the operator lets in (Kubernetes' default, within the tenant).
 *   ring0-tenant-egress   pods no tenant egress policy selects: out anywhere but the blocked ranges
 *                         (link-local: a cloud's metadata service holds the node's credentials).
 * Which pods a tenant policy selects is a label the syncer puts on each pod below (policyMarkers);
 * the tenant's own policies are confined as they go down: "from anywhere" is the tenant's own pods
 * and those the operator lets in, an ipBlock never holds a pod range, "to anywhere" and any ipBlock
 * lose the blocked ranges. Names starting `ring0-tenant-` are refused in tenants (reservedPolicyName).
 */
import { createHash } from "node:crypto";
import { type Cidr, cidrsOverlap, parseCidr } from "@/server/core/cidr";
import { CONTROL_PLANE_NAME_LABEL, MANAGED_BY_LABEL } from "@/server/provisioners/kubernetes/naming";
import { syncAnnotations, syncLabels } from "./contracts";
import type { Json } from "./synced-kinds";

/** The domain of the tenant namespace labels mirrored onto super namespaces. */
export const NAMESPACE_LABEL_DOMAIN = "ns.ring0.dev";

/** The key below of a tenant namespace label key (label names are at most 63 characters). */
export function namespaceLabelKey(key: string): string {
  return `${NAMESPACE_LABEL_DOMAIN}/${createHash("sha256").update(key).digest("hex").slice(0, 32)}`;
}

/** Every label of a tenant namespace (with `kubernetes.io/metadata.name`, which the API server sets), mirrored. */
export function namespaceLabelsBelow(
  labels: Record<string, string> | undefined,
  name: string,
): Record<string, string> {
  const mirrored: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...labels, "kubernetes.io/metadata.name": name })) {
    mirrored[namespaceLabelKey(key)] = value;
  }
  return mirrored;
}

/** A tenant's namespace selector below: the same match on the mirrored keys, within the tenant. */
export function namespaceSelectorBelow(selector: Json, tenant: string): Json {
  const matchLabels: Record<string, string> = {};
  for (const [key, value] of Object.entries(
    (selector.matchLabels as Record<string, string> | undefined) ?? {},
  )) {
    matchLabels[namespaceLabelKey(key)] = value;
  }
  matchLabels[syncLabels.tenant] = tenant;
  const expressions = (selector.matchExpressions as Json[] | undefined) ?? [];
  return {
    matchLabels,
    ...(expressions.length > 0
      ? {
          matchExpressions: expressions.map((expression) => ({
            ...expression,
            key: namespaceLabelKey(String(expression.key)),
          })),
        }
      : {}),
  };
}

function peerBelow(peer: Json, tenant: string): Json {
  return peer?.namespaceSelector
    ? { ...peer, namespaceSelector: namespaceSelectorBelow(peer.namespaceSelector as Json, tenant) }
    : peer;
}

/**
 * Ranges no tenant pod reaches by default: link-local (most clouds' metadata service: the node's
 * credentials) and the other clouds' metadata and host endpoints (Azure's WireServer, Alibaba's
 * metadata, AWS's and Google's IPv6 metadata). An operator reopens one with RING0_POD_EGRESS_ALLOW.
 * An IPv4-mapped IPv6 destination (::ffff:169.254.169.254) leaves a pod as IPv4, where the IPv4
 * range holds it; Kubernetes refuses such ranges in an ipBlock, and so does Ring0 (ipBlockWithout).
 */
export const DEFAULT_EGRESS_BLOCK = [
  "169.254.0.0/16",
  "fe80::/10",
  "168.63.129.16/32",
  "100.100.100.200/32",
  "fd00:ec2::254/128",
  "fd20:ce::254/128",
] as const;

/** What confines a tenant's pods below where NetworkPolicies are the wall (Ring0 in a cluster). */
export interface TenantBoundary {
  /** The tenant's control-plane namespace (its API server pods call webhooks and proxy to pods). */
  controlPlaneNamespace: string;
  /** Tenants whose pods the operator lets reach this tenant's (RING0_TENANT_TRAFFIC_ALLOW). */
  admits: string[];
  /**
   * The super cluster's pod ranges (RING0_POD_CIDRS): no tenant ipBlock admits them (some CNIs match
   * pods by ipBlock). Empty: unknown, so no tenant ingress ipBlock admits anything.
   */
  podRanges: string[];
  /** Whether an address is one of the super cluster's nodes' (no tenant Endpoints below names one). */
  isNodeAddress(address: string): boolean;
  /** Whether an address is one of this tenant's own pods below (its Endpoints may name those). */
  ownsPodAddress(address: string): boolean;
  /** Ranges no tenant pod reaches (DEFAULT_EGRESS_BLOCK and the operator's). */
  egressBlock: string[];
  /** Addresses inside the blocked ranges tenant pods may still reach (NodeLocal DNSCache's 169.254.20.10). */
  egressAllow: string[];
}

/** The local world's egress rules (its host wall keeps tenants apart; link-local stays blocked). */
const DEFAULT_EGRESS = { egressBlock: ["169.254.0.0/16", "fe80::/10"], egressAllow: [] as string[] };

/** An ipBlock that holds no address a pod could reach: a peer that matches nothing (never an empty list). */
const NOWHERE: Json = { ipBlock: { cidr: "0.0.0.0/32" } };

const IPV4_MAPPED: Cidr = { network: "::ffff:0.0.0.0", prefix: 96 };
const text = (range: Cidr) => `${range.network}/${range.prefix}`;
const familyOf = (range: Cidr) => (range.network.includes(":") ? 6 : 4);
const ranges = (list: readonly string[]) =>
  list.map(parseCidr).filter((range): range is Cidr => range !== undefined);

/**
 * An ipBlock with `ranges` taken out (pure): null when a range holds it all (or it is unreadable, or
 * IPv4-mapped IPv6), else with each range inside it among its exceptions. Two CIDR ranges overlap
 * only when one holds the other, so nothing else is possible.
 */
function ipBlockWithout(block: Json, taken: readonly string[]): Json | null {
  const range = typeof block?.cidr === "string" ? parseCidr(block.cidr) : undefined;
  if (!range || (familyOf(range) === 6 && cidrsOverlap(range, IPV4_MAPPED) && range.prefix >= 96))
    return null;
  const except = new Set(
    (Array.isArray(block.except) ? block.except : []).filter(
      (entry: unknown): entry is string => typeof entry === "string",
    ),
  );
  for (const other of ranges(taken)) {
    if (familyOf(other) !== familyOf(range) || !cidrsOverlap(range, other)) continue;
    if (other.prefix <= range.prefix) return null;
    except.add(text(other));
  }
  const { except: _written, ...rest } = block;
  return except.size > 0 ? { ...rest, except: [...except].sort() } : rest;
}

/** The tenant's own super namespaces, or another tenant's. */
function tenantNamespaces(tenant: string): Json {
  return {
    namespaceSelector: { matchLabels: { [syncLabels.tenant]: tenant, [syncLabels.managed]: "true" } },
  };
}

/** The tenant's API server pods (in its control-plane namespace: webhooks, aggregated APIs, pods/proxy). */
function apiServers(boundary: TenantBoundary): Json {
  return {
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": boundary.controlPlaneNamespace } },
    podSelector: {
      matchLabels: { [MANAGED_BY_LABEL]: "ring0", [CONTROL_PLANE_NAME_LABEL]: "kube-apiserver" },
    },
  };
}

/** Who may open connections to a tenant's pods: its own pods, its API servers, the tenants let in. */
function admittedPeers(tenant: string, boundary: TenantBoundary): Json[] {
  return [
    tenantNamespaces(tenant),
    apiServers(boundary),
    ...[...new Set(boundary.admits)]
      .filter((other) => other !== tenant)
      .sort()
      .map(tenantNamespaces),
  ];
}

/** Every destination but the blocked ranges: pods anywhere (whatever a CNI makes of ipBlocks), any address, the allowed holes. */
function everywhereButBlocked(egress: Pick<TenantBoundary, "egressBlock" | "egressAllow">): Json[] {
  return [
    { namespaceSelector: {} },
    ...["0.0.0.0/0", "::/0"].map((cidr) => ({ ipBlock: ipBlockWithout({ cidr }, egress.egressBlock) })),
    ...ranges(egress.egressAllow).map((range) => ({ ipBlock: { cidr: text(range) } })),
  ];
}

/** A tenant's egress peer below: an ipBlock loses the blocked ranges (keeping the allowed holes it held). */
function egressPeersBelow(peer: Json, egress: Pick<TenantBoundary, "egressBlock" | "egressAllow">): Json[] {
  const block = peer?.ipBlock as Json | undefined;
  if (!block) return [peer];
  const kept = ipBlockWithout(block, egress.egressBlock);
  const original = typeof block.cidr === "string" ? parseCidr(block.cidr) : undefined;
  const holes = original
    ? ranges(egress.egressAllow).filter(
        (hole) =>
          familyOf(hole) === familyOf(original) &&
          hole.prefix >= original.prefix &&
          cidrsOverlap(hole, original),
      )
    : [];
  return [...(kept ? [{ ipBlock: kept }] : []), ...holes.map((hole) => ({ ipBlock: { cidr: text(hole) } }))];
}

/** A tenant's ingress peer below: an ipBlock never admits a pod range. */
function ingressPeersBelow(peer: Json, boundary: TenantBoundary): Json[] {
  const block = peer?.ipBlock as Json | undefined;
  if (!block) return [peer];
  // Without known pod ranges no ipBlock can be told safe.
  const kept = boundary.podRanges.length > 0 ? ipBlockWithout(block, boundary.podRanges) : null;
  return kept ? [{ ipBlock: kept }] : [];
}

/**
 * The super cluster's DNS (kube-system's kube-dns pods, port 53): a pod whose egress a tenant policy
 * governs still resolves names, as that policy's usual "DNS to kube-system" rule (confined below to
 * the tenant's own namespaces) would no longer let it.
 */
const CLUSTER_DNS: Json = {
  to: [
    {
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
      podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
    },
  ],
  ports: [
    { protocol: "UDP", port: 53 },
    { protocol: "TCP", port: 53 },
  ],
};

/** Never an empty list below: an empty `from` or `to` means everywhere. */
const orNowhere = (peers: Json[]) => (peers.length > 0 ? peers : [NOWHERE]);

/**
 * The policy's spec below (pure): its rules as written, each peer's namespaces the tenant's own; no
 * egress to the blocked ranges (a rule to everywhere becomes one to everywhere but those). With a
 * boundary (no host wall), ingress too: "from anywhere" is admittedPeers, an ipBlock admits no pod.
 */
export function superNetworkPolicySpec(
  spec: Json | undefined,
  tenant: string,
  boundary?: TenantBoundary,
): Json {
  const copy: Json = structuredClone(spec ?? {});
  const egress = boundary ?? DEFAULT_EGRESS;
  if (Array.isArray(copy.egress)) {
    copy.egress = copy.egress.map((rule: Json) => {
      if (!rule) return rule;
      const peers =
        Array.isArray(rule.to) && rule.to.length > 0
          ? orNowhere(rule.to.flatMap((peer: Json) => egressPeersBelow(peerBelow(peer, tenant), egress)))
          : everywhereButBlocked(egress);
      return { ...rule, to: peers };
    });
  }
  if (Array.isArray(copy.ingress)) {
    copy.ingress = copy.ingress.map((rule: Json) => {
      if (!rule) return rule;
      const from: Json[] = Array.isArray(rule.from) ? rule.from : [];
      if (!boundary) {
        return from.length === 0 ? rule : { ...rule, from: from.map((peer) => peerBelow(peer, tenant)) };
      }
      return {
        ...rule,
        from:
          from.length === 0
            ? admittedPeers(tenant, boundary)
            : orNowhere(from.flatMap((peer) => ingressPeersBelow(peerBelow(peer, tenant), boundary))),
      };
    });
  }
  return copy;
}

/** Ring0's policies in every super namespace of a tenant where NetworkPolicies are the wall. */
export const BOUNDARY_POLICIES = {
  floor: "ring0-tenant-floor",
  ingress: "ring0-tenant-ingress",
  egress: "ring0-tenant-egress",
} as const;
/** The label on Ring0's boundary policies: the tenant they fence. */
export const BOUNDARY_LABEL = "ring0.dev/boundary-of";
/** Labels the syncer puts on a pod below that a tenant ingress (egress) policy selects. */
export const POLICY_MARKERS = {
  ingress: "ring0.dev/tenant-ingress-policy",
  egress: "ring0.dev/tenant-egress-policy",
} as const;

/** Whether a tenant may not use this NetworkPolicy name (Ring0's own policies below bear such names). */
export function reservedPolicyName(name: string): boolean {
  return name.startsWith("ring0-tenant-");
}

/** Whether a label selector selects these labels (matchLabels and the four set operators). */
export function selects(selector: Json | undefined, labels: Record<string, string>): boolean {
  if (!selector || typeof selector !== "object") return false;
  for (const [key, value] of Object.entries((selector.matchLabels as Record<string, string>) ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expression of (selector.matchExpressions as Json[] | undefined) ?? []) {
    const key = String(expression?.key);
    const values = Array.isArray(expression?.values) ? (expression.values as unknown[]) : [];
    const has = Object.hasOwn(labels, key);
    switch (expression?.operator) {
      case "In":
        if (!has || !values.includes(labels[key])) return false;
        break;
      case "NotIn":
        if (has && values.includes(labels[key])) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        // An operator the API server would not have taken: count the pod as selected (the safe side).
        return true;
    }
  }
  return true;
}

/** The directions a policy governs (policyTypes, or by Kubernetes' default: Ingress, and Egress if it has egress rules). */
function directionsOf(spec: Json | undefined): Set<string> {
  if (Array.isArray(spec?.policyTypes) && spec.policyTypes.length > 0)
    return new Set(spec.policyTypes as string[]);
  return new Set(["Ingress", ...(Array.isArray(spec?.egress) && spec.egress.length > 0 ? ["Egress"] : [])]);
}

/**
 * The markers of a pod below (pure): which directions some tenant policy of its namespace governs
 * for it, judged on the pod's labels below. A marked pod is left out of Ring0's broad policy in that
 * direction, so the tenant's policies alone (confined) decide for it; the floor still selects it.
 */
export function policyMarkers(labels: Record<string, string>, policies: Json[]): Record<string, string> {
  const markers: Record<string, string> = {};
  for (const policy of policies) {
    const spec = policy?.spec as Json | undefined;
    if (!selects((spec?.podSelector as Json | undefined) ?? {}, labels)) continue;
    const directions = directionsOf(spec);
    if (directions.has("Ingress")) markers[POLICY_MARKERS.ingress] = "true";
    if (directions.has("Egress")) markers[POLICY_MARKERS.egress] = "true";
  }
  return markers;
}

/**
 * Ring0's three policies in one of a tenant's super namespaces (pure; see the top of this file), in
 * the order they are written: the floor first.
 */
export function boundaryPolicies(options: {
  tenant: string;
  superNamespace: string;
  tenantNamespace: string;
  boundary: TenantBoundary;
}): Json[] {
  const { tenant, superNamespace, tenantNamespace, boundary } = options;
  const policy = (name: string, spec: Json): Json => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name,
      namespace: superNamespace,
      labels: { [BOUNDARY_LABEL]: tenant },
      annotations: { [syncAnnotations.namespace]: tenantNamespace },
    },
    spec,
  });
  const unmarked = (marker: string) => ({ matchExpressions: [{ key: marker, operator: "DoesNotExist" }] });
  return [
    policy(BOUNDARY_POLICIES.floor, {
      podSelector: {},
      policyTypes: ["Ingress", "Egress"],
      ingress: [{ from: [apiServers(boundary)] }],
      egress: [CLUSTER_DNS],
    }),
    policy(BOUNDARY_POLICIES.ingress, {
      podSelector: unmarked(POLICY_MARKERS.ingress),
      policyTypes: ["Ingress"],
      ingress: [{ from: admittedPeers(tenant, boundary) }],
    }),
    policy(BOUNDARY_POLICIES.egress, {
      podSelector: unmarked(POLICY_MARKERS.egress),
      policyTypes: ["Egress"],
      egress: [{ to: everywhereButBlocked(boundary) }],
    }),
  ];
}

/**
 * Whether a tenant's Endpoints may name this address below (pure): one of its own pods, or, with the
 * pod ranges known, an address outside them; never a node (a node port there, or a pod's own node,
 * passes every pod's policies, as kube-proxy's source NAT makes traffic the node's).
 */
export function endpointAddressAllowed(address: string, boundary: TenantBoundary): boolean {
  const ip = parseCidr(address);
  if (!ip || boundary.isNodeAddress(address)) return false;
  if (boundary.ownsPodAddress(address)) return true;
  if (boundary.podRanges.length === 0) return false;
  return !ranges(boundary.podRanges).some(
    (range) => familyOf(range) === familyOf(ip) && cidrsOverlap(range, ip),
  );
}

/**
 * A tenant's Endpoints subsets below (pure): only the addresses endpointAddressAllowed keeps, so
 * no selector-less Service of one tenant leads to another's pods or to a node.
 */
export function endpointSubsetsBelow(subsets: unknown, boundary: TenantBoundary): Json[] {
  if (!Array.isArray(subsets)) return [];
  const kept = (addresses: unknown) =>
    (Array.isArray(addresses) ? addresses : []).filter(
      (entry: Json) => typeof entry?.ip === "string" && endpointAddressAllowed(entry.ip, boundary),
    );
  return subsets.flatMap((subset: Json) => {
    const addresses = kept(subset?.addresses);
    const notReady = kept(subset?.notReadyAddresses);
    if (addresses.length === 0 && notReady.length === 0) return [];
    return [
      {
        ...subset,
        ...(addresses.length > 0 ? { addresses } : { addresses: undefined }),
        ...(notReady.length > 0 ? { notReadyAddresses: notReady } : { notReadyAddresses: undefined }),
      },
    ].map((entry) => JSON.parse(JSON.stringify(entry)) as Json);
  });
}
