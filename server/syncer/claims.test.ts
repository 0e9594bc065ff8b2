import { describe, expect, it } from "vitest";
import {
  boundVolumeOf,
  claimRefusal,
  isBoundInTenant,
  superClaimSpec,
  TENANT_VOLUME_DRIVER,
  tenantVolume,
  withEphemeralClaims,
} from "./claims";
import { defaultIsolationPolicy, LOCAL_STORAGE_CLASS, parseIsolationPolicy } from "./isolation-schema";
import type { TenantObject } from "./synced-kinds";
import { superObject } from "./translate";

const policy = defaultIsolationPolicy();
const claim = (spec: Record<string, unknown>): TenantObject => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name: "data", namespace: "shop", uid: "u-1" },
  spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } }, ...spec },
});

describe("claims below", () => {
  it("copies size, access and mode, and maps the class to one the operator offers", () => {
    const spec = superClaimSpec(
      {
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: "2Gi", cpu: "1" }, limits: { storage: "3Gi" } },
        volumeMode: "Filesystem",
        storageClassName: LOCAL_STORAGE_CLASS,
        volumeName: "pvc-of-someone-else",
      },
      policy,
    );
    expect(spec).toEqual({
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "2Gi" }, limits: { storage: "3Gi" } },
      volumeMode: "Filesystem",
      storageClassName: LOCAL_STORAGE_CLASS,
    });
    // A claim naming no class gets the first one offered.
    expect(superClaimSpec({ accessModes: ["ReadWriteOnce"] }, policy).storageClassName).toBe(
      LOCAL_STORAGE_CLASS,
    );
  });

  it("never copies a volume name: the copy of a claim pre-bound in the tenant still gets a new volume", () => {
    const below = superObject(
      "acme",
      "persistentvolumeclaim",
      claim({ volumeName: "pvc-globex" }),
      {},
      policy,
    );
    expect(JSON.stringify(below)).not.toContain("pvc-globex");
    expect(below.metadata.namespace).not.toBe("shop");
  });

  it.each([
    ["a selector", { selector: { matchLabels: { tenant: "globex" } } }, "spec.selector"],
    ["a data source", { dataSource: { kind: "PersistentVolumeClaim", name: "other" } }, "spec.dataSource"],
    ["a data source ref", { dataSourceRef: { kind: "VolumeSnapshot", name: "s" } }, "spec.dataSourceRef"],
    ["a volume attributes class", { volumeAttributesClassName: "fast" }, "volumeAttributesClassName"],
    ["a raw block device", { volumeMode: "Block" }, "volumeMode: Block"],
    ["a class not offered", { storageClassName: "host-disks" }, 'storage class "host-disks"'],
    ["no class at all (static binding)", { storageClassName: "" }, "asks for no storage class"],
  ])("refuses %s, saying what to change", (_what, spec, text) => {
    const refusal = claimRefusal(claim(spec), policy);
    expect(refusal).toContain(text);
    expect(refusal).toContain("PersistentVolumeClaim data");
  });

  it("accepts a plain claim, with or without the offered class, and says when nothing is offered", () => {
    expect(claimRefusal(claim({}), policy)).toBeNull();
    expect(claimRefusal(claim({ storageClassName: LOCAL_STORAGE_CLASS }), policy)).toBeNull();
    expect(claimRefusal(claim({}), parseIsolationPolicy({ storageClasses: [] }))).toContain(
      "offers tenants none",
    );
  });
});

describe("volumes up", () => {
  const superVolume: TenantObject = {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name: "pvc-1234" },
    spec: {
      capacity: { storage: "1Gi" },
      local: { path: "/work/.ring0/real-nodes/ring0-real-0/volumes/pvc-1234" },
      nodeAffinity: { required: { nodeSelectorTerms: [] } },
    },
  };

  it("binds up only once the copy below is bound", () => {
    expect(
      boundVolumeOf({ ...claim({ volumeName: "pvc-1234" }), status: { phase: "Pending" } }),
    ).toBeUndefined();
    expect(boundVolumeOf({ ...claim({ volumeName: "pvc-1234" }), status: { phase: "Bound" } })).toBe(
      "pvc-1234",
    );
    expect(
      isBoundInTenant({ ...claim({ volumeName: "pvc-1234" }), status: { phase: "Bound" } }, "pvc-1234"),
    ).toBe(true);
    expect(isBoundInTenant(claim({}), "pvc-1234")).toBe(false);
  });

  it("is pre-bound to the tenant's claim, of its class, and names no path of the host", () => {
    const volume = tenantVolume(claim({ storageClassName: LOCAL_STORAGE_CLASS }), superVolume);
    expect(volume).toMatchObject({
      metadata: { name: "pvc-1234" },
      spec: {
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteOnce"],
        storageClassName: LOCAL_STORAGE_CLASS,
        persistentVolumeReclaimPolicy: "Retain",
        claimRef: { namespace: "shop", name: "data", uid: "u-1" },
        csi: { driver: TENANT_VOLUME_DRIVER, volumeHandle: "pvc-1234" },
      },
    });
    expect(JSON.stringify(volume)).not.toContain("/work/");
  });
});

describe("ephemeral volumes", () => {
  it("mount the copy of the claim the tenant's controller made, never a template below", () => {
    const spec = withEphemeralClaims(
      {
        volumes: [
          { name: "scratch", ephemeral: { volumeClaimTemplate: { spec: { storageClassName: "x" } } } },
          { name: "config", configMap: { name: "c" } },
        ],
      },
      "web-0",
    );
    expect(spec.volumes).toEqual([
      { name: "scratch", persistentVolumeClaim: { claimName: "web-0-scratch" } },
      { name: "config", configMap: { name: "c" } },
    ]);
  });
});
