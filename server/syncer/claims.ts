/**
 * A tenant's PersistentVolumeClaims (pure; issue 18): what is refused, the claim's spec below, and
 * the volume that goes up into the tenant once the copy below is bound.
 *
 * A claim below always gets a new volume of a storage class the operator offers
 * (`IsolationPolicy.storageClasses`, the first one when the claim names none): nothing a tenant
 * writes can bind it to an existing volume (`volumeName` is never copied; `selector`, `dataSource`
 * and `dataSourceRef` are refused), so no claim reaches another tenant's data. Up in the tenant, a
 * PersistentVolume of the same name as the one below, pre-bound to the tenant's claim, lets the
 * tenant's own controller bind it as it would any volume; it names no path of the host.
 */
import type { KubeObject } from "@/server/k8s/apply";
import { type IsolationPolicy, syncLabels } from "./contracts";
import type { Json, TenantObject } from "./synced-kinds";

/** The CSI driver named by the volumes that go up: a name only (tenants have no kubelet to mount with). */
export const TENANT_VOLUME_DRIVER = "local-volume.ring0.dev";

const stringOf = (value: unknown) => (typeof value === "string" ? value : undefined);

/** The class a claim gets below, or undefined when it names one the operator does not offer. */
export function claimClassBelow(spec: Json | undefined, policy: IsolationPolicy): string | undefined {
  const named = spec?.storageClassName;
  if (named === undefined || named === null) return policy.storageClasses[0];
  return typeof named === "string" && policy.storageClasses.includes(named) ? named : undefined;
}

/** Why a claim cannot be copied below (and what to change), or null. */
export function claimRefusal(claim: TenantObject, policy: IsolationPolicy): string | null {
  const spec = claim.spec ?? {};
  const what = `PersistentVolumeClaim ${claim.metadata.name}`;
  for (const field of ["selector", "dataSource", "dataSourceRef"] as const) {
    if (spec[field] !== undefined && spec[field] !== null) {
      return `${what} sets spec.${field}, which picks an existing volume or its data; remove it and the claim gets a new, empty volume.`;
    }
  }
  if (spec.volumeMode === "Block") {
    return `${what} asks for a raw block device (volumeMode: Block); local volumes are directories, use volumeMode: Filesystem.`;
  }
  if (spec.volumeAttributesClassName) {
    return `${what} names a volume attributes class; none is offered here, remove spec.volumeAttributesClassName.`;
  }
  if (claimClassBelow(spec, policy) === undefined) {
    const offered = policy.storageClasses.map((name) => `"${name}"`).join(", ");
    if (!offered) return `${what} asks for storage, and this Ring0 offers tenants none (no storage class).`;
    const asked =
      spec.storageClassName === ""
        ? "asks for no storage class (a pre-made volume), which is not offered"
        : `names storage class "${stringOf(spec.storageClassName) ?? "?"}", which the operator does not offer`;
    return `${what} ${asked}; use one of ${offered}.`;
  }
  return null;
}

/** The claim's spec below: its size, access and mode, the class it maps to; nothing that binds. */
export function superClaimSpec(spec: Json | undefined, policy: IsolationPolicy): Json {
  const below: Json = {};
  if (Array.isArray(spec?.accessModes)) below.accessModes = spec.accessModes;
  const resources = spec?.resources as { requests?: Json; limits?: Json } | undefined;
  const storage = (side: Json | undefined) =>
    side?.storage !== undefined ? { storage: side.storage } : undefined;
  const requests = storage(resources?.requests);
  const limits = storage(resources?.limits);
  if (requests || limits)
    below.resources = { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
  if (typeof spec?.volumeMode === "string") below.volumeMode = spec.volumeMode;
  const storageClass = claimClassBelow(spec, policy);
  if (storageClass) below.storageClassName = storageClass;
  return below;
}

/** A volume's reference to the claim it is bound to (pre-binding it to exactly that claim, by uid). */
export function claimRefOf(claim: { metadata: { name: string; namespace?: string; uid?: string } }): Json {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    namespace: claim.metadata.namespace,
    name: claim.metadata.name,
    uid: claim.metadata.uid,
  };
}

/** The name of the volume the copy below is bound to, once it is. */
export function boundVolumeOf(below: TenantObject | undefined): string | undefined {
  const name = stringOf(below?.spec?.volumeName);
  return name && (below?.status as Json | undefined)?.phase === "Bound" ? name : undefined;
}

/** Whether the tenant's claim is already bound to `volume` (nothing to write up). */
export function isBoundInTenant(claim: TenantObject, volume: string): boolean {
  return claim.spec?.volumeName === volume && (claim.status as Json | undefined)?.phase === "Bound";
}

/**
 * The volume that goes up for `claim`, bound below to `superVolume`: its name, size and node of the
 * one below, the claim's class, modes and identity, so the tenant's controller binds the two. Its
 * reclaim policy is Retain: the tenant has no provisioner, and the syncer removes it with the claim.
 */
export function tenantVolume(claim: TenantObject, superVolume: TenantObject): KubeObject {
  const spec = (superVolume.spec ?? {}) as Json;
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: {
      name: superVolume.metadata.name,
      labels: { [syncLabels.managed]: "true" },
    },
    spec: {
      capacity: spec.capacity,
      accessModes: claim.spec?.accessModes ?? spec.accessModes,
      volumeMode: claim.spec?.volumeMode ?? "Filesystem",
      storageClassName: stringOf(claim.spec?.storageClassName) ?? "",
      persistentVolumeReclaimPolicy: "Retain",
      claimRef: claimRefOf(claim),
      csi: { driver: TENANT_VOLUME_DRIVER, volumeHandle: superVolume.metadata.name },
      ...(spec.nodeAffinity ? { nodeAffinity: spec.nodeAffinity } : {}),
    },
  } as KubeObject;
}

/**
 * A pod's ephemeral volumes below, as claims of their own: the tenant's controller makes each
 * volume's claim (`<pod>-<volume>`) in the tenant, the syncer copies it down like any claim, and the
 * pod below mounts that copy. The super cluster's controller never makes a second one from the
 * template, whose class and data source are the tenant's words.
 */
export function withEphemeralClaims(spec: Json, podName: string): Json {
  if (!Array.isArray(spec.volumes)) return spec;
  return {
    ...spec,
    volumes: spec.volumes.map((volume: Json) =>
      volume?.ephemeral
        ? { name: volume.name, persistentVolumeClaim: { claimName: `${podName}-${String(volume.name)}` } }
        : volume,
    ),
  };
}
