import { describe, expect, it } from "vitest";
import { RING0_VN_AGENT_POD_PORT, RING0_WEBHOOK_POD_PORT } from "./ring0-pods";
import {
  controlPlaneApiChain,
  controlPlaneChain,
  controlPlanePods,
  OTHERS_CHAIN,
  podOwners,
  RING0_CHAIN,
  ring0Pods,
  tenantChain,
  tenantWallChains,
  VN_AGENTS_CHAIN,
  wallRestoreText,
} from "./tenant-wall";
import { parseTrafficAllowances } from "./traffic-allowances";

const pod = (name: string, ip: string | undefined, tenant?: string, extra: Record<string, unknown> = {}) => ({
  metadata: {
    name,
    namespace: "ns",
    labels: tenant ? { "ring0.dev/tenant": tenant, "ring0.dev/synced": "true" } : {},
  },
  spec: {},
  status: { podIP: ip, phase: "Running" },
  ...extra,
});

const owners = new Map<string, string | null>([
  ["10.244.0.5", "acme"],
  ["10.244.0.8", "acme"],
  ["10.244.0.6", "globex"],
  ["10.244.0.7", null],
]);

describe("the wall between tenants' pods", () => {
  it("sends a new connection by its source to its owner's chain; replies pass; unknown sources drop", () => {
    const chains = tenantWallChains(owners, []);
    const tenants = (chains.get("RING0-TENANTS") ?? []).map((rule) => rule.join(" "));
    expect(tenants[0]).toBe("-m conntrack --ctstate ESTABLISHED,RELATED -j RETURN");
    expect(tenants).toContain(`-s 10.244.0.5/32 -j ${tenantChain("acme")}`);
    expect(tenants).toContain(`-s 10.244.0.6/32 -j ${tenantChain("globex")}`);
    expect(tenants).toContain(`-s 10.244.0.7/32 -j ${OTHERS_CHAIN}`);
    expect(tenants.at(-1)).toBe("-j DROP");
  });

  it("lets a tenant's pods reach its own and nothing else; the operator's pods only each other", () => {
    const chains = tenantWallChains(owners, []);
    expect(chains.get(tenantChain("acme"))).toEqual([
      ["-d", "10.244.0.5/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.8/32", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    expect(chains.get(tenantChain("globex"))).toEqual([
      ["-d", "10.244.0.6/32", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    expect(chains.get(OTHERS_CHAIN)).toEqual([
      ["-d", "10.244.0.7/32", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
  });

  it("an operator's leave opens one direction only", () => {
    const chains = tenantWallChains(owners, [
      ["globex", "acme"],
      ["initech", "acme"],
    ]);
    expect(chains.get(tenantChain("globex"))).toEqual([
      ["-d", "10.244.0.6/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.5/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.8/32", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    expect(JSON.stringify(chains.get(tenantChain("acme")))).not.toContain("10.244.0.6");
    expect(chains.has(tenantChain("initech"))).toBe(false);
  });

  it("lets a tenant's pods reach port 6443 of its own control plane's API servers; a control plane reaches only itself", () => {
    const withControlPlane = new Map([...owners, ["10.244.0.20", null], ["10.244.0.21", null]]);
    const controlPlanes = {
      members: new Map([
        ["10.244.0.20", "acme"],
        ["10.244.0.21", "acme"],
      ]),
      apis: new Map([["acme", ["10.244.0.20"]]]),
    };
    const chains = tenantWallChains(withControlPlane, [], controlPlanes);
    expect(chains.get(tenantChain("acme"))).toEqual([
      ["-d", "10.244.0.5/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.8/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.20/32", "-p", "tcp", "--dport", "6443", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    expect(JSON.stringify(chains.get(tenantChain("globex")))).not.toContain("10.244.0.20");
    // Its pods (API server, etcd) reach each other; etcd nothing else; the operator's pods never them.
    expect(chains.get(controlPlaneChain("acme"))).toEqual([
      ["-d", "10.244.0.21/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.20/32", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    // Its API server also its own tenant's pods, any port (webhooks, aggregated APIs), never globex's.
    const tenants = (chains.get("RING0-TENANTS") ?? []).map((rule) => rule.join(" "));
    expect(tenants).toContain(`-s 10.244.0.20/32 -j ${controlPlaneApiChain("acme")}`);
    expect(chains.get(controlPlaneApiChain("acme"))).toEqual([
      ["-d", "10.244.0.20/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.21/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.5/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.8/32", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    expect(chains.get(OTHERS_CHAIN)).toEqual([
      ["-d", "10.244.0.7/32", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    expect(controlPlaneChain("acme")).not.toBe(tenantChain("acme"));
  });

  it("lets Ring0's own pods reach port 6443 of every control plane's API servers, and the operator's pods", () => {
    const world = new Map([...owners, ["10.244.0.20", null], ["10.244.0.30", null], ["10.244.0.40", null]]);
    const controlPlanes = {
      members: new Map([
        ["10.244.0.20", "acme"],
        ["10.244.0.30", "globex"],
      ]),
      apis: new Map([
        ["acme", ["10.244.0.20"]],
        ["globex", ["10.244.0.30"]],
      ]),
    };
    const chains = tenantWallChains(world, [], controlPlanes, new Set(["10.244.0.40"]));
    const tenants = (chains.get("RING0-TENANTS") ?? []).map((rule) => rule.join(" "));
    expect(tenants).toContain(`-s 10.244.0.40/32 -j ${RING0_CHAIN}`);
    expect(chains.get(RING0_CHAIN)).toEqual([
      ["-d", "10.244.0.40/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.7/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.20/32", "-p", "tcp", "--dport", "6443", "-j", "ACCEPT"],
      ["-d", "10.244.0.30/32", "-p", "tcp", "--dport", "6443", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    // The operator's other pods reach Ring0's (an ingress controller), never a control plane.
    expect(chains.get(OTHERS_CHAIN)).toEqual([
      ["-d", "10.244.0.7/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.40/32", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    // Tenants reach neither Ring0's pods nor another tenant's control plane.
    expect(JSON.stringify(chains.get(tenantChain("acme")))).not.toMatch(/10\.244\.0\.(40|30)\//);
    // A control plane's API servers reach Ring0's pods on the webhooks' port, nothing else of them;
    // the control plane's other pods (etcd) not at all.
    expect(chains.get(controlPlaneApiChain("acme"))).toEqual([
      ["-d", "10.244.0.20/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.5/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.8/32", "-j", "ACCEPT"],
      ["-d", "10.244.0.40/32", "-p", "tcp", "--dport", String(RING0_WEBHOOK_POD_PORT), "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    expect(JSON.stringify(chains.get(controlPlaneChain("acme")) ?? [])).not.toContain("10.244.0.40");
  });

  it("lets a vn-agent pod reach only its own node's kubelet, and control planes' API servers reach it on its port only", () => {
    const world = new Map([...owners, ["10.244.0.20", null], ["10.244.0.21", null], ["10.244.1.50", null]]);
    const controlPlanes = {
      members: new Map([
        ["10.244.0.20", "acme"],
        ["10.244.0.21", "acme"],
      ]),
      apis: new Map([["acme", ["10.244.0.20"]]]),
    };
    const agents = new Map([
      ["10.244.1.50", "10.244.1.1"],
      // An address in doubt (two owners) is no agent's: it opens nothing.
      ["10.244.0.5", "10.244.0.1"],
    ]);
    const chains = tenantWallChains(world, [], controlPlanes, new Set(), agents);
    const tenants = (chains.get("RING0-TENANTS") ?? []).map((rule) => rule.join(" "));
    expect(tenants).toContain(`-s 10.244.1.50/32 -j ${VN_AGENTS_CHAIN}`);
    // An agent opens no connection to any pod, not even another agent.
    expect(chains.get(VN_AGENTS_CHAIN)).toEqual([["-j", "DROP"]]);
    // Only its own node's kubelet API, from the host's INPUT chain.
    expect(chains.get("RING0-NODE-AGENTS")).toEqual([
      ["-s", "10.244.1.50/32", "-d", "10.244.1.1/32", "-p", "tcp", "--dport", "10250", "-j", "ACCEPT"],
    ]);
    // The control plane's API servers reach it on the agent's port; its etcd and tenants never.
    expect(chains.get(controlPlaneApiChain("acme"))).toContainEqual([
      "-d",
      "10.244.1.50/32",
      "-p",
      "tcp",
      "--dport",
      String(RING0_VN_AGENT_POD_PORT),
      "-j",
      "ACCEPT",
    ]);
    expect(JSON.stringify(chains.get(controlPlaneChain("acme")))).not.toContain("10.244.1.50");
    expect(JSON.stringify(chains.get(tenantChain("acme")))).not.toContain("10.244.1.50");
    expect(JSON.stringify(chains.get(OTHERS_CHAIN))).not.toContain("10.244.1.50");
    // Without agents the host's chain is written empty: no pod reaches a service of the host.
    expect(tenantWallChains(owners, []).get("RING0-NODE-AGENTS")).toEqual([]);
  });

  it("knows a vn-agent pod by the chart's labels in ring0-system, on the real node whose subnet holds it", () => {
    const labels = { "app.kubernetes.io/name": "ring0", "app.kubernetes.io/component": "vn-agent" };
    const agent = (name: string, ip: string, nodeName: string, namespace = "ring0-system") => ({
      metadata: { name, namespace, labels },
      spec: { nodeName },
      status: { podIP: ip, phase: "Running" },
    });
    const pods = [
      agent("vn-agent-a", "10.244.0.60", "ring0-real-0"),
      agent("vn-agent-b", "10.244.1.61", "ring0-real-1"),
      // A pod claiming another node than the subnet it is in reaches no kubelet.
      agent("vn-agent-c", "10.244.1.62", "ring0-real-0"),
      // The labels outside Ring0's namespace: an impostor.
      agent("vn-agent-d", "10.244.0.63", "ring0-real-0", "default"),
    ];
    const found = ring0Pods(pods as never, podOwners(pods as never));
    expect([...found.vnAgents]).toEqual([
      ["10.244.0.60", "10.244.0.1"],
      ["10.244.1.61", "10.244.1.1"],
    ]);
    expect([...found.servers]).toEqual([]);
  });

  it("knows Ring0's pods by the chart's labels in ring0-system, at an address the operator holds alone", () => {
    const labels = { "app.kubernetes.io/name": "ring0", "app.kubernetes.io/component": "server" };
    const ring0 = (name: string, ip: string, namespace = "ring0-system") => ({
      metadata: { name, namespace, labels },
      spec: {},
      status: { podIP: ip, phase: "Running" },
    });
    const pods = [
      ring0("ring0-a", "10.244.0.40"),
      // The same labels elsewhere: an impostor.
      ring0("ring0-b", "10.244.0.41", "default"),
      // A tenant's synced pod cannot be one, whatever it is called.
      {
        ...ring0("ring0-c", "10.244.0.42"),
        metadata: {
          name: "c",
          namespace: "ring0-system",
          labels: { ...labels, ...pod("x", "", "acme").metadata.labels },
        },
      },
      // Two pods at one address: neither, until one is gone.
      ring0("ring0-d", "10.244.0.43"),
      { ...pod("other", "10.244.0.43"), metadata: { name: "other", namespace: "default", labels: {} } },
    ];
    const found = ring0Pods(pods as never, podOwners(pods as never)).servers;
    expect([...found]).toEqual(["10.244.0.40"]);
  });

  it("finds a control plane's pods only by Ring0's labels in that tenant's control-plane namespace", () => {
    const controlPlanePod = (
      name: string,
      ip: string,
      labels: Record<string, string>,
      namespace = "ring0-cp-acme",
      extra: Record<string, unknown> = {},
    ) => ({
      metadata: { name, namespace, labels, ...extra },
      spec: {},
      status: { podIP: ip, phase: "Running" },
    });
    const ring0 = { "app.kubernetes.io/managed-by": "ring0", "ring0.dev/tenant": "acme" };
    const api = { ...ring0, "app.kubernetes.io/name": "kube-apiserver" };
    const pods = [
      controlPlanePod("api", "10.244.0.20", api),
      controlPlanePod("api-2", "10.244.0.19", api),
      controlPlanePod("etcd", "10.244.0.21", { ...ring0, "app.kubernetes.io/name": "etcd" }),
      // A pod claiming to be acme's API server outside acme's control-plane namespace.
      controlPlanePod("impostor", "10.244.0.22", api, "ring0-cp-globex"),
      // One the syncer made (a tenant's own pod with those labels).
      controlPlanePod("synced", "10.244.0.23", { ...api, "ring0.dev/synced": "true" }),
      controlPlanePod("unmanaged", "10.244.0.24", {
        "ring0.dev/tenant": "acme",
        "app.kubernetes.io/name": "kube-apiserver",
      }),
      // Going away: still its control plane's (never the operator's), no longer an API server.
      controlPlanePod("leaving", "10.244.0.25", api, "ring0-cp-acme", {
        deletionTimestamp: "2026-11-27T00:00:00Z",
      }),
      // An address in doubt (two pods claim it).
      controlPlanePod("doubted", "10.244.0.26", api),
      { ...pod("tenant", "10.244.0.26", "globex") },
    ];
    const found = controlPlanePods(pods, podOwners(pods));
    expect([...found.apis.entries()]).toEqual([["acme", ["10.244.0.19", "10.244.0.20"]]]);
    expect([...found.members.entries()].sort()).toEqual([
      ["10.244.0.19", "acme"],
      ["10.244.0.20", "acme"],
      ["10.244.0.21", "acme"],
      ["10.244.0.25", "acme"],
    ]);
    // In the wall: the leaving API server reaches its control plane only, and no one opens to it.
    const chains = tenantWallChains(podOwners(pods), [], found);
    const tenants = (chains.get("RING0-TENANTS") ?? []).map((rule) => rule.join(" "));
    expect(tenants).toContain(`-s 10.244.0.25/32 -j ${controlPlaneChain("acme")}`);
    expect(JSON.stringify(chains.get(OTHERS_CHAIN))).not.toContain("10.244.0.25");
    expect(JSON.stringify(chains.get(controlPlaneChain("acme")))).not.toContain("10.244.0.24");
    for (const [chain, rules] of chains) {
      if (
        chain === controlPlaneChain("acme") ||
        chain === controlPlaneApiChain("acme") ||
        chain === "RING0-TENANTS"
      )
        continue;
      expect(JSON.stringify(rules), chain).not.toContain("10.244.0.25");
    }
  });

  it("knows a pod's address by the super cluster's tenant label, and drops what is in doubt", () => {
    const found = podOwners([
      pod("a", "10.244.0.5", "acme"),
      pod("g", "10.244.0.6", "globex"),
      pod("op", "10.244.0.7"),
      pod("host", "10.244.0.1", "acme", { spec: { hostNetwork: true } }),
      pod("done", "10.244.0.8", "acme", { status: { podIP: "10.244.0.8", phase: "Succeeded" } }),
      pod("pending", undefined, "acme"),
      pod("simulated", "10.0.0.9", "acme"),
      pod("malformed", "10.244.0.300", "acme"),
      // A tenant label the syncer did not write (no managed label): the operator's pod.
      {
        ...pod("control-plane", "10.244.0.10"),
        metadata: { name: "cp", namespace: "t", labels: { "ring0.dev/tenant": "acme" } },
      },
      // An address two owners claim belongs to neither until one is gone.
      pod("old", "10.244.0.9", "acme"),
      pod("new", "10.244.0.9", "globex"),
      pod("third", "10.244.0.9", "acme"),
    ]);
    expect([...found.entries()].sort()).toEqual([
      ["10.244.0.10", null],
      ["10.244.0.5", "acme"],
      ["10.244.0.6", "globex"],
      ["10.244.0.7", null],
    ]);
  });

  it("writes every chain in one transaction, each declared (so flushed) first", () => {
    const text = wallRestoreText(tenantWallChains(owners, []));
    expect(text.startsWith("*mangle\n:RING0-TENANTS - [0:0]\n")).toBe(true);
    expect(text).toContain(`:${tenantChain("acme")} - [0:0]`);
    expect(text.trimEnd().endsWith("COMMIT")).toBe(true);
    expect(tenantChain("a-tenant-with-a-rather-long-name-indeed").length).toBeLessThanOrEqual(28);
  });

  it("reads the operator's leave, refusing anything unclear", () => {
    expect(parseTrafficAllowances("globex>acme, initech>acme")).toEqual([
      ["globex", "acme"],
      ["initech", "acme"],
    ]);
    expect(parseTrafficAllowances(undefined)).toEqual([]);
    expect(() => parseTrafficAllowances("globex->acme")).toThrow(/entry 1/);
    expect(() => parseTrafficAllowances("globex>acme>initech")).toThrow(/FROM>TO/);
    expect(() => parseTrafficAllowances("globex>ACME")).toThrow(/two tenant names/);
  });
});
