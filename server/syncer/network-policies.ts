/**
 * A tenant's NetworkPolicies below (pure; issue 18), for kube-router on the real nodes
 * (server/cluster/real-node/network-policy.ts). A policy lives in its namespace's super namespace
 * and selects pods by the labels they keep below. A peer's namespace selector is the tenant's: it
 * is rewritten to the mirrored labels every super namespace carries of its tenant namespace
 * (`ns.ring0.dev/<hash of the key>`, namespaceLabelsBelow) and confined to the tenant's own super
 * namespaces, so it can never select another tenant's namespaces or the super cluster's. Whatever a
 * policy allows, the wall between tenants (server/cluster/real-node/tenant-wall.ts) drops traffic
 * between tenants first: a policy only narrows.
 */
import { createHash } from "node:crypto";
import { syncLabels } from "./contracts";
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

function peersBelow(peers: unknown, tenant: string): unknown {
  if (!Array.isArray(peers)) return peers;
  return peers.map((peer: Json) =>
    peer?.namespaceSelector
      ? { ...peer, namespaceSelector: namespaceSelectorBelow(peer.namespaceSelector as Json, tenant) }
      : peer,
  );
}

/** The policy's spec below: its rules as written, each peer's namespaces the tenant's own. */
export function superNetworkPolicySpec(spec: Json | undefined, tenant: string): Json {
  const copy: Json = structuredClone(spec ?? {});
  for (const [direction, field] of [
    ["ingress", "from"],
    ["egress", "to"],
  ] as const) {
    const rules = copy[direction];
    if (!Array.isArray(rules)) continue;
    copy[direction] = rules.map((rule: Json) =>
      rule && rule[field] !== undefined ? { ...rule, [field]: peersBelow(rule[field], tenant) } : rule,
    );
  }
  return copy;
}
