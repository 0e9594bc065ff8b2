import { afterEach, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { type KubeObject, readObject } from "@/server/k8s/apply";
import { connectCluster, getSuperCluster, setSuperCluster } from "@/server/k8s/cluster";
import { testSuperCluster, unreachableKubeconfig } from "@/server/k8s/test-cluster";
import { testCaller, testOperator, testTenantAdmin, trpcOutcome } from "@/test/integration/trpc";

const operator = testOperator();
const tenantAdmin = testTenantAdmin();

// The node procedures never touch the database.
const callerFor = (user: SessionUser) => testCaller(user);

const codeOf = trpcOutcome;

afterEach(() => setSuperCluster(null));

describe("nodes router against the local super cluster", () => {
  it("lists the super cluster's nodes as kubectl would, and one node with its conditions", async () => {
    const conn = testSuperCluster();
    setSuperCluster(conn);
    const nodes = await callerFor(operator).nodes.list();
    expect(nodes.length).toBeGreaterThanOrEqual(3);
    const first = nodes[0]!;
    const raw = await readObject<KubeObject & { status: { capacity: Record<string, string> } }>(conn, {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: first.name },
    });
    expect(first).toMatchObject({ status: "Ready", capacity: { cpu: raw.status.capacity.cpu } });
    expect(first.zone).toMatch(/^zone-[abc]$/);

    const detail = await callerFor(operator).nodes.get({ name: first.name });
    expect(detail.node.name).toBe(first.name);
    expect(detail.node.conditions.map((condition) => condition.type)).toContain("Ready");

    const overview = await callerFor(operator).nodes.overview();
    expect(overview).toMatchObject({ connected: true, health: { ok: true } });
    expect(overview.connected && overview.version).toMatch(/^v1\.36\./);
  });

  it("answers NOT_FOUND for an unknown node and BAD_REQUEST for a malformed name", async () => {
    setSuperCluster(testSuperCluster());
    expect((await codeOf(callerFor(operator).nodes.get({ name: "no-such-node" })))[0]).toBe("NOT_FOUND");
    const [code, message] = await codeOf(callerFor(operator).nodes.get({ name: "Bad_Name" }));
    expect(code).toBe("BAD_REQUEST");
    expect(message).toContain("name:");
  });

  it("is for operators only", async () => {
    setSuperCluster(testSuperCluster());
    expect((await codeOf(callerFor(tenantAdmin).nodes.list()))[0]).toBe("FORBIDDEN");
  });

  it("reports an unreachable super cluster as SERVICE_UNAVAILABLE naming the server", async () => {
    const unreachable = connectCluster("gone", { inline: unreachableKubeconfig });
    setSuperCluster(unreachable);
    const [code, message] = await codeOf(callerFor(operator).nodes.list());
    expect(code).toBe("SERVICE_UNAVAILABLE");
    expect(message).toContain("127.0.0.1:9");
    expect(await callerFor(operator).nodes.overview()).toMatchObject({
      connected: true,
      health: { ok: false },
    });
    setSuperCluster(null);
    expect(getSuperCluster()).toBeNull();
    expect((await codeOf(callerFor(operator).nodes.list()))[0]).toBe("SERVICE_UNAVAILABLE");
    expect(await callerFor(operator).nodes.overview()).toMatchObject({ connected: false });
  });
});
