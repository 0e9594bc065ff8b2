import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObject } from "@/server/k8s/apply";
import { testNamespace, testSuperCluster } from "@/server/k8s/test-cluster";
import { type ResourceRef, readResource, updateStatusWithRetry } from "./status";

const conn = testSuperCluster();

interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
}

interface ServiceStatus {
  conditions?: Condition[];
}

const condition = (type: string): Condition => ({
  type,
  status: "True",
  reason: "Tested",
  message: `${type} set by the status test`,
  lastTransitionTime: new Date(0).toISOString().replace(".000Z", "Z"),
});

describe("status writes against the super cluster", () => {
  let namespace = "";
  let cleanup: () => Promise<void> = async () => {};
  let ref: ResourceRef;

  beforeAll(async () => {
    [namespace, cleanup] = await testNamespace(conn, "status");
    ref = { apiVersion: "v1", resource: "services", namespace, name: "probe" };
    await createObject(conn, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "probe", namespace },
      spec: { ports: [{ port: 80 }] },
    });
  });
  afterAll(async () => {
    await cleanup();
  });

  it("writes the status subresource, and concurrent writers both land through conflict retries", async () => {
    const add = (type: string) =>
      updateStatusWithRetry<ServiceStatus>(
        conn,
        ref,
        (status) => {
          status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== type), condition(type)];
        },
        { maxAttempts: 20 },
      );
    await Promise.all(["A", "B", "C", "D"].map(add));
    const service = await readResource<{ status?: ServiceStatus }>(conn, ref);
    expect(service.status?.conditions?.map((c) => c.type).sort()).toEqual(["A", "B", "C", "D"]);
  });
});
