import { describe, expect, it } from "vitest";
import { localNodeIndex, localNodeManifest, localNodeName } from "./nodes";

describe("local super cluster nodes", () => {
  it("spreads zones and carries realistic capacity, kwok's annotation and a localhost InternalDNS first", () => {
    const zones = [0, 1, 2, 3].map(
      (i) => localNodeManifest(i).metadata.labels?.["topology.kubernetes.io/zone"],
    );
    expect(zones).toEqual(["zone-a", "zone-b", "zone-c", "zone-a"]);
    const node = localNodeManifest(0);
    expect(node.metadata.annotations?.["kwok.x-k8s.io/node"]).toBe("fake");
    expect(node.metadata.labels?.["node.kubernetes.io/instance-type"]).toBe("ring0.standard-16");
    expect(node.status).toMatchObject({
      capacity: { cpu: "16", memory: "64Gi", pods: "110" },
      addresses: [
        { type: "InternalDNS", address: "localhost" },
        { type: "Hostname", address: "localhost" },
        { type: "InternalIP", address: "192.0.2.1" },
      ],
    });
  });

  it("carries the simulated taint only when the cluster has real nodes", () => {
    expect(localNodeManifest(0).spec).toEqual({});
    expect(localNodeManifest(0, "v1.36.4", 10250, true).spec).toEqual({
      taints: [{ key: "ring0.dev/simulated", value: "true", effect: "NoSchedule" }],
    });
  });

  it("round-trips names and indices", () => {
    expect(localNodeIndex(localNodeName(12))).toBe(12);
    expect(localNodeIndex("ring0-node-01")).toBeUndefined();
    expect(localNodeIndex("other-0")).toBeUndefined();
  });
});
