import { describe, expect, it } from "vitest";
import { syncAnnotations, syncLabels } from "./contracts";
import {
  BOUNDARY_LABEL,
  BOUNDARY_POLICIES,
  boundaryPolicies,
  DEFAULT_EGRESS_BLOCK,
  endpointAddressAllowed,
  endpointSubsetsBelow,
  namespaceLabelKey,
  namespaceLabelsBelow,
  POLICY_MARKERS,
  policyMarkers,
  reservedPolicyName,
  selects,
  superNetworkPolicySpec,
  type TenantBoundary,
} from "./network-policies";
import { superObject } from "./translate";

describe("NetworkPolicies below", () => {
  it("keep their rules; a peer's namespaces are the tenant's own, by their mirrored labels", () => {
    const spec = superNetworkPolicySpec(
      {
        podSelector: { matchLabels: { app: "db" } },
        policyTypes: ["Ingress", "Egress"],
        ingress: [
          {
            from: [
              { podSelector: { matchLabels: { app: "web" } } },
              { namespaceSelector: {} },
              {
                namespaceSelector: {
                  matchLabels: { team: "shop" },
                  matchExpressions: [
                    { key: "kubernetes.io/metadata.name", operator: "In", values: ["a", "b"] },
                  ],
                },
                podSelector: { matchLabels: { role: "client" } },
              },
            ],
            ports: [{ protocol: "TCP", port: 5432 }],
          },
        ],
        egress: [{ to: [{ ipBlock: { cidr: "10.244.255.1/32" } }], ports: [{ protocol: "UDP", port: 53 }] }],
      },
      "acme",
    );
    expect(spec.podSelector).toEqual({ matchLabels: { app: "db" } });
    const from = (spec.ingress as { from: Record<string, unknown>[] }[])[0]?.from ?? [];
    expect(from[0]).toEqual({ podSelector: { matchLabels: { app: "web" } } });
    // "Every namespace" is every namespace of this tenant, never another's or the super cluster's.
    expect(from[1]).toEqual({ namespaceSelector: { matchLabels: { [syncLabels.tenant]: "acme" } } });
    expect(from[2]).toEqual({
      namespaceSelector: {
        matchLabels: { [namespaceLabelKey("team")]: "shop", [syncLabels.tenant]: "acme" },
        matchExpressions: [
          { key: namespaceLabelKey("kubernetes.io/metadata.name"), operator: "In", values: ["a", "b"] },
        ],
      },
      podSelector: { matchLabels: { role: "client" } },
    });
    expect(spec.egress).toEqual([
      { to: [{ ipBlock: { cidr: "10.244.255.1/32" } }], ports: [{ protocol: "UDP", port: 53 }] },
    ]);
  });

  it("a tenant's selector naming Ring0's tenant label still stays within the tenant", () => {
    const spec = superNetworkPolicySpec(
      { ingress: [{ from: [{ namespaceSelector: { matchLabels: { [syncLabels.tenant]: "globex" } } }] }] },
      "acme",
    );
    const selector = (
      spec.ingress as { from: { namespaceSelector: { matchLabels: Record<string, string> } }[] }[]
    )[0]?.from[0]?.namespaceSelector;
    expect(selector?.matchLabels[syncLabels.tenant]).toBe("acme");
    expect(selector?.matchLabels[namespaceLabelKey(syncLabels.tenant)]).toBe("globex");
  });

  it("super namespaces carry the tenant namespace's labels, and its name, under Ring0's keys", () => {
    const mirrored = namespaceLabelsBelow({ team: "shop" }, "orders");
    expect(mirrored).toEqual({
      [namespaceLabelKey("team")]: "shop",
      [namespaceLabelKey("kubernetes.io/metadata.name")]: "orders",
    });
    for (const key of Object.keys(mirrored)) expect(key.split("/")[1]?.length).toBeLessThanOrEqual(63);
    const below = superObject("acme", "networkpolicy", {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "deny", namespace: "orders", uid: "u" },
      spec: { podSelector: {}, policyTypes: ["Ingress"] },
    });
    expect(below).toMatchObject({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "deny", labels: { [syncLabels.tenant]: "acme" } },
      spec: { podSelector: {}, policyTypes: ["Ingress"] },
    });
    expect(below.metadata.namespace).not.toBe("orders");
  });

  const boundary: TenantBoundary = {
    controlPlaneNamespace: "ring0-cp-acme",
    admits: ["globex", "acme", "globex"],
    podRanges: ["10.244.0.0/16"],
    egressBlock: [...DEFAULT_EGRESS_BLOCK, "10.0.0.7/32"],
    egressAllow: ["169.254.20.10/32"],
    isNodeAddress: (address) => address === "10.0.0.4",
    ownsPodAddress: (address) => address === "10.244.1.7",
  };
  const own = {
    namespaceSelector: { matchLabels: { [syncLabels.tenant]: "acme", [syncLabels.managed]: "true" } },
  };
  const apiServers = {
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ring0-cp-acme" } },
    podSelector: {
      matchLabels: { "app.kubernetes.io/managed-by": "ring0", "app.kubernetes.io/name": "kube-apiserver" },
    },
  };
  const globex = {
    namespaceSelector: { matchLabels: { [syncLabels.tenant]: "globex", [syncLabels.managed]: "true" } },
  };
  const nowhere = { ipBlock: { cidr: "0.0.0.0/32" } };

  it("never reopen link-local addresses (a cloud's metadata service), whatever a tenant's egress says", () => {
    const egress = (to: unknown) =>
      (superNetworkPolicySpec({ egress: [{ to }] }, "acme").egress as { to: unknown }[])[0]?.to;
    // A range around a blocked one gets it as an exception; one inside it matches nothing.
    expect(egress([{ ipBlock: { cidr: "0.0.0.0/0" } }])).toEqual([
      { ipBlock: { cidr: "0.0.0.0/0", except: ["169.254.0.0/16"] } },
    ]);
    expect(egress([{ ipBlock: { cidr: "169.254.169.254/32" } }])).toEqual([nowhere]);
    expect(egress([{ ipBlock: { cidr: "fe80::1/128" } }])).toEqual([nowhere]);
    // IPv4-mapped IPv6 (which Kubernetes refuses in an ipBlock): nothing.
    expect(egress([{ ipBlock: { cidr: "::ffff:a9fe:a9fe/128" } }])).toEqual([nowhere]);
    expect(egress([{ ipBlock: { cidr: "::ffff:0:0/96" } }])).toEqual([nowhere]);
    expect(egress([{ ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/24"] } }])).toEqual([
      { ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/24", "169.254.0.0/16"] } },
    ]);
    // Elsewhere, and pods, untouched; an unreadable range matches nothing.
    expect(egress([{ ipBlock: { cidr: "10.0.0.0/24" } }, { podSelector: {} }])).toEqual([
      { ipBlock: { cidr: "10.0.0.0/24" } },
      { podSelector: {} },
    ]);
    expect(egress([{ ipBlock: { cidr: "not-a-range" } }])).toEqual([nowhere]);
    // A rule to everywhere (no `to`, or an empty one) is to everywhere but the blocked ranges.
    for (const to of [undefined, []]) {
      expect(egress(to)).toEqual([
        { namespaceSelector: {} },
        { ipBlock: { cidr: "0.0.0.0/0", except: ["169.254.0.0/16"] } },
        { ipBlock: { cidr: "::/0", except: ["fe80::/10"] } },
      ]);
    }
  });

  it("with a boundary, an operator's blocked ranges and allowed holes shape every egress rule", () => {
    const spec = superNetworkPolicySpec(
      { egress: [{}, { to: [{ ipBlock: { cidr: "169.254.0.0/16" } }] }] },
      "acme",
      boundary,
    );
    const [everywhere, linkLocal] = spec.egress as { to: unknown[] }[];
    // Link-local and the clouds' other metadata endpoints by default, and the operator's.
    expect(everywhere?.to).toEqual([
      { namespaceSelector: {} },
      {
        ipBlock: {
          cidr: "0.0.0.0/0",
          except: ["10.0.0.7/32", "100.100.100.200/32", "168.63.129.16/32", "169.254.0.0/16"],
        },
      },
      { ipBlock: { cidr: "::/0", except: ["fd00:ec2::254/128", "fd20:ce::254/128", "fe80::/10"] } },
      { ipBlock: { cidr: "169.254.20.10/32" } },
    ]);
    // All of link-local asked for: only the hole the operator allows.
    expect(linkLocal?.to).toEqual([{ ipBlock: { cidr: "169.254.20.10/32" } }]);
  });

  it("with a boundary, no tenant ingress rule admits another tenant's pods", () => {
    const spec = superNetworkPolicySpec(
      {
        podSelector: { matchLabels: { app: "web" } },
        ingress: [
          {},
          { from: [] },
          { from: [{ ipBlock: { cidr: "0.0.0.0/0" } }] },
          { from: [{ ipBlock: { cidr: "10.244.3.0/24" } }] },
          { from: [{ ipBlock: { cidr: "10.0.0.0/24" } }, { podSelector: {} }] },
          { from: [{ namespaceSelector: {} }] },
        ],
      },
      "acme",
      boundary,
    );
    const from = (spec.ingress as { from: unknown[] }[]).map((rule) => rule.from);
    // From anywhere: the tenant's own pods, its API servers, and the tenants the operator lets in.
    expect(from[0]).toEqual([own, apiServers, globex]);
    expect(from[1]).toEqual([own, apiServers, globex]);
    // An ipBlock never holds the pod ranges (a CNI may match pods by address); inside them, nothing.
    expect(from[2]).toEqual([{ ipBlock: { cidr: "0.0.0.0/0", except: ["10.244.0.0/16"] } }]);
    expect(from[3]).toEqual([nowhere]);
    expect(from[4]).toEqual([{ ipBlock: { cidr: "10.0.0.0/24" } }, { podSelector: {} }]);
    expect(from[5]).toEqual([{ namespaceSelector: { matchLabels: { [syncLabels.tenant]: "acme" } } }]);
    // Pod ranges unknown: no ipBlock can be told safe.
    const blind = superNetworkPolicySpec(
      { ingress: [{ from: [{ ipBlock: { cidr: "10.0.0.0/24" } }] }] },
      "acme",
      { ...boundary, podRanges: [] },
    );
    expect((blind.ingress as { from: unknown[] }[])[0]?.from).toEqual([nowhere]);
  });

  it("fence each super namespace: a floor for every pod, the tenant's own traffic for pods no tenant policy governs", () => {
    const policies = boundaryPolicies({
      tenant: "acme",
      superNamespace: "t1a2b3-default",
      tenantNamespace: "default",
      boundary,
    }) as { metadata: Record<string, unknown>; spec: Record<string, unknown> }[];
    expect(policies.map((policy) => policy.metadata.name)).toEqual([
      BOUNDARY_POLICIES.floor,
      BOUNDARY_POLICIES.ingress,
      BOUNDARY_POLICIES.egress,
    ]);
    for (const policy of policies) {
      expect(policy.metadata).toMatchObject({
        namespace: "t1a2b3-default",
        labels: { [BOUNDARY_LABEL]: "acme" },
        annotations: { [syncAnnotations.namespace]: "default" },
      });
      // Never the syncer's labels: nothing that collects a tenant's copies below takes these.
      expect(policy.metadata.labels).not.toHaveProperty(syncLabels.managed);
      expect(reservedPolicyName(String(policy.metadata.name))).toBe(true);
    }
    const [floor, ingress, egress] = policies;
    // In only from the API servers, out only to the cluster's DNS.
    expect(floor?.spec).toEqual({
      podSelector: {},
      policyTypes: ["Ingress", "Egress"],
      ingress: [{ from: [apiServers] }],
      egress: [
        {
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
        },
      ],
    });
    expect(ingress?.spec).toEqual({
      podSelector: { matchExpressions: [{ key: POLICY_MARKERS.ingress, operator: "DoesNotExist" }] },
      policyTypes: ["Ingress"],
      ingress: [{ from: [own, apiServers, globex] }],
    });
    expect(egress?.spec.podSelector).toEqual({
      matchExpressions: [{ key: POLICY_MARKERS.egress, operator: "DoesNotExist" }],
    });
    expect(JSON.stringify(egress?.spec.egress)).toContain('"except":["10.0.0.7/32","100.100.100.200/32"');
  });

  it("mark a pod by the directions its tenant's policies govern for it", () => {
    const policy = (spec: Record<string, unknown>) => ({ spec });
    const web = { app: "web", tier: "front" };
    expect(policyMarkers(web, [])).toEqual({});
    // Default policyTypes: Ingress, and Egress when it has egress rules.
    expect(policyMarkers(web, [policy({ podSelector: {} })])).toEqual({ [POLICY_MARKERS.ingress]: "true" });
    expect(policyMarkers(web, [policy({ podSelector: {}, egress: [{}] })])).toEqual({
      [POLICY_MARKERS.ingress]: "true",
      [POLICY_MARKERS.egress]: "true",
    });
    expect(
      policyMarkers(web, [policy({ podSelector: { matchLabels: { app: "db" } }, policyTypes: ["Ingress"] })]),
    ).toEqual({});
    expect(
      policyMarkers(web, [policy({ podSelector: { matchLabels: { app: "web" } }, policyTypes: ["Egress"] })]),
    ).toEqual({ [POLICY_MARKERS.egress]: "true" });
  });

  it("select by labels as Kubernetes does: matchLabels and In, NotIn, Exists, DoesNotExist", () => {
    const labels = { app: "web", tier: "front" };
    const expression = (operator: string, key: string, values?: string[]) => ({
      matchExpressions: [{ key, operator, ...(values ? { values } : {}) }],
    });
    expect(selects({}, labels)).toBe(true);
    expect(selects({ matchLabels: { app: "web" } }, labels)).toBe(true);
    expect(selects({ matchLabels: { app: "db" } }, labels)).toBe(false);
    expect(selects(expression("In", "tier", ["front", "back"]), labels)).toBe(true);
    expect(selects(expression("In", "zone", ["a"]), labels)).toBe(false);
    expect(selects(expression("NotIn", "tier", ["front"]), labels)).toBe(false);
    // NotIn holds for a pod without the key.
    expect(selects(expression("NotIn", "zone", ["a"]), labels)).toBe(true);
    expect(selects(expression("Exists", "app"), labels)).toBe(true);
    expect(selects(expression("Exists", "zone"), labels)).toBe(false);
    expect(selects(expression("DoesNotExist", "zone"), labels)).toBe(true);
    expect(selects(expression("DoesNotExist", "app"), labels)).toBe(false);
  });

  it("let a tenant's Endpoints name only its own pods or outside addresses, never a node or another's pod", () => {
    const allowed = (address: string, over: Partial<TenantBoundary> = {}) =>
      endpointAddressAllowed(address, { ...boundary, ...over });
    expect(allowed("10.244.1.7")).toBe(true); // acme's own pod
    expect(allowed("10.244.2.9")).toBe(false); // another tenant's pod (or the super cluster's)
    expect(allowed("10.0.0.50")).toBe(true); // outside the pod ranges (a Service's range here)
    expect(allowed("10.0.0.4")).toBe(false); // a node, though outside the pod ranges
    expect(allowed("not-an-address")).toBe(false);
    // Pod ranges unknown: only its own pods.
    expect(allowed("10.0.0.50", { podRanges: [] })).toBe(false);
    expect(allowed("10.244.1.7", { podRanges: [] })).toBe(true);
    const below = endpointSubsetsBelow(
      [
        {
          addresses: [{ ip: "10.244.2.9" }, { ip: "10.244.1.7" }],
          notReadyAddresses: [{ ip: "10.0.0.4" }],
          ports: [{ port: 80 }],
        },
        { addresses: [{ ip: "10.244.2.9" }], ports: [{ port: 81 }] },
      ],
      boundary,
    );
    expect(below).toEqual([{ addresses: [{ ip: "10.244.1.7" }], ports: [{ port: 80 }] }]);
    // Through the translation of a tenant's Endpoints.
    const endpoints = superObject(
      "acme",
      "endpoints",
      {
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: "db", namespace: "default", uid: "u" },
        subsets: [{ addresses: [{ ip: "10.244.2.9" }], ports: [{ port: 5432 }] }],
      },
      {},
      undefined,
      boundary,
    ) as { subsets?: unknown[] };
    expect(endpoints.subsets).toEqual([]);
  });
});
