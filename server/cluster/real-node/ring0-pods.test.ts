import { describe, expect, it } from "vitest";
import { isRing0ServerPod, RING0_SERVER_LABELS, RING0_VN_AGENT_LABELS, ring0PodAt } from "./ring0-pods";

const ring0Pod = (overrides: Record<string, unknown> = {}, ip = "10.244.0.7") => ({
  metadata: { name: "ring0-abc", namespace: "ring0-system", labels: { ...RING0_SERVER_LABELS } },
  status: { phase: "Running", podIP: ip },
  ...overrides,
});

describe("Ring0's own server pods (the super API proxy's and the tenant wall's check)", () => {
  it("admits a running pod of Ring0's own Deployment at that address", () => {
    expect(isRing0ServerPod([ring0Pod()], "10.244.0.7")).toBe(true);
  });

  it("refuses a tenant's pod, an impostor with Ring0's labels elsewhere, and an unknown address", () => {
    const tenantPod = {
      metadata: { name: "web", namespace: "t1a2b3-default", labels: { "ring0.dev/tenant": "acme" } },
      status: { phase: "Running", podIP: "10.244.0.9" },
    };
    expect(isRing0ServerPod([tenantPod], "10.244.0.9")).toBe(false);
    const impostor = {
      metadata: { name: "ring0", namespace: "t1a2b3-default", labels: { ...RING0_SERVER_LABELS } },
      status: { phase: "Running", podIP: "10.244.0.9" },
    };
    expect(isRing0ServerPod([impostor], "10.244.0.9")).toBe(false);
    expect(isRing0ServerPod([], "10.244.0.9")).toBe(false);
    // Another pod's record for another address proves nothing about this one.
    expect(isRing0ServerPod([ring0Pod()], "10.244.0.9")).toBe(false);
  });

  it("refuses Ring0's namespace without the server's labels, and a pod leaving or not yet running", () => {
    const other = ring0Pod({
      metadata: { name: "postgres", namespace: "ring0-system", labels: { app: "pg" } },
    });
    expect(isRing0ServerPod([other], "10.244.0.7")).toBe(false);
    const leaving = ring0Pod({
      metadata: {
        name: "ring0-abc",
        namespace: "ring0-system",
        labels: { ...RING0_SERVER_LABELS },
        deletionTimestamp: "2026-11-27T00:00:00Z",
      },
    });
    expect(isRing0ServerPod([leaving], "10.244.0.7")).toBe(false);
    expect(
      isRing0ServerPod([ring0Pod({ status: { phase: "Pending", podIP: "10.244.0.7" } })], "10.244.0.7"),
    ).toBe(false);
  });

  it("refuses a host-network pod in Ring0's namespace with Ring0's labels (its address is the node's)", () => {
    expect(isRing0ServerPod([ring0Pod({ spec: { hostNetwork: true } })], "10.244.0.7")).toBe(false);
  });

  it("admits nothing while two pods claim one address", () => {
    const reused = {
      metadata: { name: "web", namespace: "t1a2b3-default" },
      status: { phase: "Running", podIP: "10.244.0.7" },
    };
    expect(isRing0ServerPod([ring0Pod(), reused], "10.244.0.7")).toBe(false);
  });

  it("is not hidden by a finished pod that still lists the address, nor by a host-network one", () => {
    const finished = {
      metadata: { name: "job-x", namespace: "t1a2b3-default" },
      status: { phase: "Succeeded", podIP: "10.244.0.7" },
    };
    const failed = { ...finished, status: { phase: "Failed", podIP: "10.244.0.7" } };
    const agent = {
      ...finished,
      spec: { hostNetwork: true },
      status: { phase: "Running", podIP: "10.244.0.7" },
    };
    expect(isRing0ServerPod([ring0Pod(), finished, failed, agent], "10.244.0.7")).toBe(true);
    // …and a finished Ring0 pod is not one.
    expect(
      isRing0ServerPod([ring0Pod({ status: { phase: "Failed", podIP: "10.244.0.7" } })], "10.244.0.7"),
    ).toBe(false);
  });

  it("tells Ring0's vn-agent pods from its server pods, by the chart's labels in ring0-system", () => {
    const agent = ring0Pod({
      metadata: { name: "ring0-vn-agent-x", namespace: "ring0-system", labels: { ...RING0_VN_AGENT_LABELS } },
    });
    expect(ring0PodAt([agent], "10.244.0.7")).toBe("vn-agent");
    expect(isRing0ServerPod([agent], "10.244.0.7")).toBe(false);
    expect(ring0PodAt([ring0Pod()], "10.244.0.7")).toBe("server");
    const elsewhere = ring0Pod({
      metadata: { name: "vn-agent", namespace: "default", labels: { ...RING0_VN_AGENT_LABELS } },
    });
    expect(ring0PodAt([elsewhere], "10.244.0.7")).toBeUndefined();
  });
});
