import { describe, expect, it } from "vitest";
import { podRow } from "./pods";

describe("podRow's owner", () => {
  it("is the controlling ownerReference, as is (a Deployment's pod shows its ReplicaSet)", () => {
    const row = podRow({
      metadata: {
        namespace: "default",
        name: "web-7d9f-abc",
        ownerReferences: [
          { apiVersion: "v1", kind: "Node", name: "other", uid: "1" },
          { apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-7d9f", uid: "2", controller: true },
        ],
      },
    });
    expect(row.owner).toEqual({ kind: "ReplicaSet", name: "web-7d9f" });
  });

  it("is null without a controller (a bare pod, or owners that do not control it)", () => {
    expect(podRow({ metadata: { namespace: "default", name: "bare" } }).owner).toBeNull();
    expect(
      podRow({
        metadata: {
          namespace: "default",
          name: "owned",
          ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "c", uid: "1", controller: false }],
        },
      }).owner,
    ).toBeNull();
  });
});
