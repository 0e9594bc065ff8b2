import { describe, expect, it } from "vitest";
import { K8sError } from "@/server/k8s/errors";
import {
  type ObjectWithStatus,
  type ResourceRef,
  resourcePath,
  type StatusStore,
  updateStatusWithRetry,
} from "./status";

interface TenantStatus {
  phase?: string;
  observed?: number;
}

type Tenant = ObjectWithStatus<TenantStatus>;

const ref: ResourceRef = { apiVersion: "ring0.dev/v1alpha1", resource: "tenants", name: "acme" };

/** One object with a resourceVersion; writes with a stale one are 409s. `onRead` simulates other writers. */
function fakeStore(initial: Tenant, onRead?: (object: Tenant, reads: number) => void) {
  let object = structuredClone(initial);
  let version = 1;
  object.metadata.resourceVersion = "1";
  const stats = { reads: 0, writes: 0, conflicts: 0 };
  const store: StatusStore = {
    async read<T>() {
      stats.reads++;
      const copy = structuredClone(object);
      onRead?.(object, stats.reads);
      return copy as T;
    },
    async writeStatus<T>(_ref: ResourceRef, next: T) {
      const candidate = next as Tenant;
      if (candidate.metadata.resourceVersion !== object.metadata.resourceVersion) {
        stats.conflicts++;
        throw new K8sError({ status: 409, reason: "Conflict", message: "the object has been modified" });
      }
      stats.writes++;
      version++;
      object = {
        ...object,
        status: candidate.status,
        metadata: { ...object.metadata, resourceVersion: String(version) },
      };
      return structuredClone(object) as T;
    },
  };
  return { store, stats, current: () => object };
}

describe("updateStatusWithRetry", () => {
  it("builds API paths for core, grouped, namespaced and cluster-scoped objects", () => {
    expect(resourcePath(ref)).toBe("/apis/ring0.dev/v1alpha1/tenants/acme");
    expect(resourcePath({ apiVersion: "v1", resource: "services", namespace: "ns", name: "s" })).toBe(
      "/api/v1/namespaces/ns/services/s",
    );
  });

  it("applies the mutation to the status and writes it", async () => {
    const { store, current } = fakeStore({ metadata: { name: "acme" }, status: { phase: "Pending" } });
    const written = await updateStatusWithRetry<TenantStatus>(store, ref, (status) => {
      status.phase = "Ready";
    });
    expect(written.status).toEqual({ phase: "Ready" });
    expect(current().status).toEqual({ phase: "Ready" });
  });

  it("starts from an empty status and accepts a returned status", async () => {
    const { store, current } = fakeStore({ metadata: { name: "acme" } });
    await updateStatusWithRetry<TenantStatus>(store, ref, () => ({ phase: "Provisioning" }));
    expect(current().status).toEqual({ phase: "Provisioning" });
  });

  it("does not write an unchanged status", async () => {
    const { store, stats } = fakeStore({ metadata: { name: "acme" }, status: { phase: "Ready" } });
    await updateStatusWithRetry<TenantStatus>(store, ref, (status) => {
      status.phase = "Ready";
    });
    expect(stats.writes).toBe(0);
  });

  it("on a Conflict, reads again and re-applies the mutation to the fresh object", async () => {
    // Another writer bumps the object (and its status) right after each of our first two reads.
    const { store, stats, current } = fakeStore(
      { metadata: { name: "acme" }, status: { observed: 0 } },
      (object, reads) => {
        if (reads <= 2) {
          object.status = { ...object.status, observed: reads };
          object.metadata.resourceVersion = `other-${reads}`;
        }
      },
    );
    const seen: (number | undefined)[] = [];
    await updateStatusWithRetry<TenantStatus>(store, ref, (status) => {
      seen.push(status.observed);
      status.phase = "Ready";
    });
    expect(stats.conflicts).toBe(2);
    expect(seen).toEqual([0, 1, 2]);
    expect(current().status).toEqual({ observed: 2, phase: "Ready" });
  });

  it("gives up after maxAttempts conflicts and throws the Conflict", async () => {
    const { store, stats } = fakeStore({ metadata: { name: "acme" } }, (object, reads) => {
      object.metadata.resourceVersion = `other-${reads}`;
    });
    await expect(
      updateStatusWithRetry<TenantStatus>(store, ref, (status) => ({ ...status, phase: "Ready" }), {
        maxAttempts: 3,
      }),
    ).rejects.toMatchObject({ reason: "Conflict" });
    expect(stats.reads).toBe(3);
  });

  it("does not retry other errors", async () => {
    let reads = 0;
    const store: StatusStore = {
      read: async <T>() => {
        reads++;
        return { metadata: { name: "acme", resourceVersion: "1" } } as T;
      },
      writeStatus: async () => {
        throw new K8sError({ status: 422, reason: "Invalid", message: "status.phase: Unsupported value" });
      },
    };
    await expect(
      updateStatusWithRetry<TenantStatus>(store, ref, () => ({ phase: "Nope" })),
    ).rejects.toMatchObject({ reason: "Invalid" });
    expect(reads).toBe(1);
  });
});
