import { describe, expect, it } from "vitest";
import { LOCAL_STORAGE_CLASS } from "@/server/syncer/isolation-schema";
import {
  isLocalVolumeName,
  isReclaimable,
  localVolume,
  nodeToProvision,
  pinnedNode,
  SELECTED_NODE_ANNOTATION,
  volumeNameFor,
} from "./volumes";

const uid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
const claim = (overrides: Record<string, unknown> = {}, annotations: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name: "data", namespace: "t-acme-shop", uid, annotations },
  spec: {
    storageClassName: LOCAL_STORAGE_CLASS,
    accessModes: ["ReadWriteOnce"],
    resources: { requests: { storage: "1Gi" } },
  },
  status: { phase: "Pending" },
  ...overrides,
});
const ours = () => true;

describe("local volumes", () => {
  it("provision a claim of Ring0's class once the scheduler chose one of this host's real nodes", () => {
    expect(nodeToProvision(claim({}, { [SELECTED_NODE_ANNOTATION]: "ring0-real-0" }), ours)).toBe(
      "ring0-real-0",
    );
    // Not yet placed, placed on a simulated or another host's node, another class, already bound.
    expect(nodeToProvision(claim(), ours)).toBeNull();
    expect(nodeToProvision(claim({}, { [SELECTED_NODE_ANNOTATION]: "ring0-node-0" }), ours)).toBeNull();
    expect(
      nodeToProvision(claim({}, { [SELECTED_NODE_ANNOTATION]: "ring0-real-1" }), () => false),
    ).toBeNull();
    const other = claim(
      { spec: { storageClassName: "other" } },
      { [SELECTED_NODE_ANNOTATION]: "ring0-real-0" },
    );
    expect(nodeToProvision(other, ours)).toBeNull();
    const bound = claim(
      { spec: { storageClassName: LOCAL_STORAGE_CLASS, volumeName: "pv" } },
      {
        [SELECTED_NODE_ANNOTATION]: "ring0-real-0",
      },
    );
    expect(nodeToProvision(bound, ours)).toBeNull();
  });

  it("make a volume bound to the claim from the start, pinned to the node", () => {
    const volume = localVolume(claim(), "ring0-real-0", "/state/real-nodes/ring0-real-0/volumes/x");
    expect(volume.metadata.name).toBe(volumeNameFor(claim()));
    expect(volume).toMatchObject({
      spec: {
        capacity: { storage: "1Gi" },
        claimRef: { namespace: "t-acme-shop", name: "data", uid },
        persistentVolumeReclaimPolicy: "Delete",
        local: { path: "/state/real-nodes/ring0-real-0/volumes/x" },
      },
    });
    expect(pinnedNode(volume)).toBe("ring0-real-0");
  });

  it("reclaim only their own released volumes, by a name of theirs", () => {
    const volume = {
      ...localVolume(claim(), "ring0-real-0", "/x"),
      status: { phase: "Released" },
    };
    expect(isReclaimable(volume)).toBe(true);
    expect(isReclaimable({ ...volume, status: { phase: "Bound" } })).toBe(false);
    expect(isReclaimable({ ...volume, metadata: { ...volume.metadata, name: "../../etc" } })).toBe(false);
    expect(isReclaimable({ ...volume, metadata: { ...volume.metadata, annotations: {} } })).toBe(false);
    expect(isLocalVolumeName(`pvc-${uid}`)).toBe(true);
    expect(isLocalVolumeName(`pvc-${uid}/..`)).toBe(false);
    // A node that is not a real node's name pins nothing (no path is made from it).
    const elsewhere = localVolume(claim(), "../../etc", "/x");
    expect(pinnedNode(elsewhere)).toBeNull();
  });
});
