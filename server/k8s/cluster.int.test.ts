import { describe, expect, it } from "vitest";
import { createObject, deleteObject, readObject, replaceObject, serverSideApply } from "./apply";
import { clusterHealth, clusterVersion } from "./cluster";
import { isConflict, isNotFound, K8sError } from "./errors";
import { testNamespace, testSuperCluster } from "./test-cluster";

const conn = testSuperCluster();

async function rejection(promise: Promise<unknown>): Promise<K8sError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(K8sError);
  return error as K8sError;
}

describe("the local super cluster connection", () => {
  it("reports Kubernetes v1.36 and is healthy", async () => {
    const version = await clusterVersion(conn);
    expect(version.gitVersion).toMatch(/^v1\.36\./);
    expect(version.platform).toMatch(/^linux\//);
    const health = await clusterHealth(conn);
    expect(health).toMatchObject({ ok: true, detail: "ready" });
    expect(conn.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });
});

describe("server-side apply and typed errors", () => {
  it("applies idempotently as field manager ring0", async () => {
    const [namespace, cleanup] = await testNamespace(conn, "ssa");
    try {
      const manifest = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "settings", namespace, labels: { app: "ring0" } },
        data: { mode: "strict" },
      };
      const first = await serverSideApply(conn, manifest);
      const second = await serverSideApply(conn, manifest);
      expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
      expect(second.metadata.managedFields).toEqual(
        expect.arrayContaining([expect.objectContaining({ manager: "ring0", operation: "Apply" })]),
      );
      const changed = await serverSideApply(conn, { ...manifest, data: { mode: "relaxed" } });
      expect(changed.metadata.resourceVersion).not.toBe(first.metadata.resourceVersion);
      expect(changed.data).toEqual({ mode: "relaxed" });
    } finally {
      await cleanup();
    }
  });

  it("maps NotFound, AlreadyExists, Conflict and Invalid with the API's own messages", async () => {
    const [namespace, cleanup] = await testNamespace(conn, "errors");
    try {
      const ref = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "missing", namespace } };
      const notFound = await rejection(readObject(conn, ref));
      expect(notFound).toMatchObject({
        status: 404,
        reason: "NotFound",
        message: 'configmaps "missing" not found',
      });
      expect(isNotFound(notFound)).toBe(true);
      expect(await deleteObject(conn, ref)).toBe(false);

      const manifest = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "once", namespace },
        data: { a: "1" },
      };
      const created = await createObject(conn, manifest);
      const exists = await rejection(createObject(conn, manifest));
      expect(exists).toMatchObject({
        status: 409,
        reason: "AlreadyExists",
        message: 'configmaps "once" already exists',
      });

      await replaceObject(conn, { ...created, data: { a: "2" } });
      const stale = await rejection(replaceObject(conn, { ...created, data: { a: "3" } }));
      expect(stale).toMatchObject({ status: 409, reason: "Conflict" });
      expect(stale.message).toContain("the object has been modified");
      expect(isConflict(stale)).toBe(true);

      const invalid = await rejection(
        createObject(conn, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "Not_A_DNS_Name", namespace },
        }),
      );
      expect(invalid).toMatchObject({ status: 422, reason: "Invalid" });
      expect(invalid.message).toMatch(/^ConfigMap "Not_A_DNS_Name" is invalid: metadata.name: Invalid value/);
      expect(invalid.details?.causes?.[0]?.field).toBe("metadata.name");

      expect(await deleteObject(conn, { ...ref, metadata: { name: "once", namespace } })).toBe(true);
    } finally {
      await cleanup();
    }
  });
});
