/**
 * The super cluster's copy of a tenant object (downward), as a pure function of what the syncer
 * read: its name and namespace below, the metadata that passes (server/syncer/metadata.ts), the
 * spec of a pod (super-pod-spec.ts) or service, and the hash annotation that tells whether an
 * object below is already what the syncer would write. Nothing here does I/O, so every rule is
 * unit-tested.
 */
import { createHash } from "node:crypto";
import type { KubeObject } from "@/server/k8s/apply";
import { superClaimSpec, withEphemeralClaims } from "./claims";
import { type IsolationPolicy, syncAnnotations, syncLabels } from "./contracts";
import { withTenantDns } from "./dns-config";
import { runtimeClassOf } from "./isolation-policy";
import { defaultIsolationPolicy } from "./isolation-schema";
import { allowListed, podAnnotationsBelow, withoutReservedKeys, withoutRing0OwnedKeys } from "./metadata";
import { superNamespace } from "./naming";
import {
  endpointSubsetsBelow,
  namespaceLabelsBelow,
  superNetworkPolicySpec,
  type TenantBoundary,
} from "./network-policies";
import { podSecurityLabels } from "./pod-security";
import { type PlacementPolicy, superPodSpec } from "./super-pod-spec";
import { type Json, kindInfo, type SyncedKind, type TenantObject } from "./synced-kinds";

/** Annotation on super objects: a hash of what the syncer last applied, so unchanged objects are not re-applied. */
export const syncHashAnnotation = "ring0.dev/sync-hash";

export function hashOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}

/**
 * Labels of the copy below (server/syncer/metadata.ts says what passes): a namespace keeps only
 * the tenant labels the operator allow-listed, and gets the tenant's Pod Security labels; other
 * kinds keep the tenant's labels outside Ring0's and kwok's domains. Ring0's own come last, so no
 * tenant label overrides them.
 */
function labelsFor(
  tenant: string,
  kind: SyncedKind,
  object: TenantObject,
  policy: IsolationPolicy,
): Record<string, string> {
  if (kind === "namespace") {
    return {
      ...allowListed(object.metadata.labels, policy.namespaceLabels),
      ...namespaceLabelsBelow(object.metadata.labels, object.metadata.name),
      ...podSecurityLabels(policy),
      ...ring0Labels(tenant),
    };
  }
  return { ...withoutRing0OwnedKeys(object.metadata.labels), ...ring0Labels(tenant) };
}

function ring0Labels(tenant: string): Record<string, string> {
  return { [syncLabels.tenant]: tenant, [syncLabels.managed]: "true" };
}

/**
 * Annotations of the copy below: none of a namespace's (the super cluster's admission reads
 * namespace annotations, e.g. a default node selector), only the allow-listed ones of a pod (CNI
 * plugins, runtimes and mesh injectors read pod annotations), the tenant's outside Ring0's and
 * kwok's domains for other kinds; then Ring0's own.
 */
function annotationsFor(
  kind: SyncedKind,
  object: TenantObject,
  namespace: string | undefined,
  policy: IsolationPolicy,
): Record<string, string> {
  const tenants =
    kind === "namespace"
      ? {}
      : kind === "pod"
        ? podAnnotationsBelow(object.metadata.annotations, policy.podAnnotations)
        : kind === "persistentvolumeclaim"
          ? // The PV controller and the scheduler read a claim's Kubernetes annotations (its class,
            // its node): below they are the super cluster's to set, never the tenant's.
            withoutReservedKeys(object.metadata.annotations)
          : withoutRing0OwnedKeys(object.metadata.annotations);
  const annotations: Record<string, string> = { ...tenants };
  delete annotations["kubectl.kubernetes.io/last-applied-configuration"];
  if (namespace !== undefined) annotations[syncAnnotations.namespace] = namespace;
  annotations[syncAnnotations.name] = object.metadata.name;
  if (object.metadata.uid) annotations[syncAnnotations.uid] = object.metadata.uid;
  const generation = (object.metadata as { generation?: unknown }).generation;
  if (kind === "pod" && typeof generation === "number")
    annotations[syncAnnotations.generation] = String(generation);
  return annotations;
}

/** An IPv4 address a tenant Service's copy may ask for below (both clusters allocate from 10.0.0.0/24). */
const serviceAddress = /^10\.0\.0\.(25[0-4]|2[0-4]\d|1\d\d|[1-9]\d?)$/;

function serviceSpec(spec: Json): Json {
  const copy: Json = structuredClone(spec);
  // Node ports, load-balancer and external addresses are the super cluster's to give. The cluster
  // IP is asked for as the tenant has it, so the tenant's Service and its DNS answer agree; the
  // reconciler lets the super cluster pick another when that one is taken below
  // (reconcile-objects.ts). A headless Service stays headless.
  const clusterIP = copy.clusterIP;
  for (const field of [
    "clusterIP",
    "clusterIPs",
    "healthCheckNodePort",
    "ipFamilies",
    "loadBalancerIP",
    "externalIPs",
  ]) {
    delete copy[field];
  }
  if (clusterIP === "None") {
    copy.clusterIP = "None";
  } else if (
    typeof clusterIP === "string" &&
    serviceAddress.test(clusterIP) &&
    copy.type !== "ExternalName"
  ) {
    copy.clusterIP = clusterIP;
  }
  if (Array.isArray(copy.ports)) {
    copy.ports = copy.ports.map((port: Json) => {
      const { nodePort: _nodePort, ...rest } = port;
      return rest;
    });
  }
  return copy;
}

/**
 * The super cluster's copy of a tenant object (without the hash annotation), or null when this kind
 * is not copied. Owner references and finalizers stay in the tenant: their uids and controllers
 * live there. `policy` is the tenant's isolation policy: its Pod Security level labels the super
 * namespace, its allow-lists say which namespace labels and pod annotations pass. `boundary`: where
 * NetworkPolicies are the wall between tenants, how a NetworkPolicy is confined (network-policies.ts).
 */
export function superObject(
  tenant: string,
  kind: SyncedKind,
  object: TenantObject,
  placement: PlacementPolicy = {},
  policy: IsolationPolicy = defaultIsolationPolicy(),
  boundary?: TenantBoundary,
): KubeObject {
  const info = kindInfo[kind];
  const tenantNamespace = object.metadata.namespace;
  const metadata: KubeObject["metadata"] = {
    name: kind === "namespace" ? superNamespace(tenant, object.metadata.name) : object.metadata.name,
    labels: labelsFor(tenant, kind, object, policy),
    annotations: annotationsFor(
      kind,
      object,
      kind === "namespace" ? object.metadata.name : tenantNamespace,
      policy,
    ),
  };
  if (info.namespaced && tenantNamespace) metadata.namespace = superNamespace(tenant, tenantNamespace);
  const base: KubeObject = { apiVersion: info.apiVersion, kind: info.kind, metadata };
  switch (kind) {
    case "namespace":
      return base;
    case "pod":
      return {
        ...base,
        // The operator's pod labels beat the tenant's, Ring0's beat both.
        metadata: {
          ...metadata,
          labels: { ...metadata.labels, ...placement.podLabels, ...ring0Labels(tenant) },
        },
        spec: withTenantDns(
          withEphemeralClaims(
            superPodSpec(
              object.spec ?? {},
              placement,
              tenant,
              object.metadata.uid,
              runtimeClassOf(object.spec as { runtimeClassName?: unknown } | undefined, policy),
            ),
            object.metadata.name,
          ),
          placement.podDns,
          tenantNamespace,
        ),
      };
    case "service":
      return { ...base, spec: serviceSpec(object.spec ?? {}) };
    case "endpoints": {
      // Where NetworkPolicies are the wall, an address below is only the tenant's own or outside.
      const subsets =
        boundary && object.subsets ? endpointSubsetsBelow(object.subsets, boundary) : object.subsets;
      return { ...base, ...(subsets ? { subsets } : {}) };
    }
    case "configmap":
      return {
        ...base,
        ...(object.data ? { data: object.data } : {}),
        ...(object.binaryData ? { binaryData: object.binaryData } : {}),
        ...(object.immutable !== undefined ? { immutable: object.immutable } : {}),
      };
    case "secret":
      return {
        ...base,
        ...(object.type ? { type: object.type } : {}),
        ...(object.data ? { data: object.data } : {}),
        ...(object.immutable !== undefined ? { immutable: object.immutable } : {}),
      };
    case "persistentvolumeclaim":
      return { ...base, spec: superClaimSpec(object.spec, policy) };
    case "networkpolicy":
      return { ...base, spec: superNetworkPolicySpec(object.spec, tenant, boundary) };
    case "serviceaccount":
      return {
        ...base,
        ...(object.imagePullSecrets ? { imagePullSecrets: object.imagePullSecrets } : {}),
        ...(object.automountServiceAccountToken !== undefined
          ? { automountServiceAccountToken: object.automountServiceAccountToken }
          : {}),
      };
  }
}

/** The super object with its hash annotation (what the syncer applies and later compares). */
export function withSyncHash(object: KubeObject): KubeObject {
  const hash = hashOf(object);
  return {
    ...object,
    metadata: {
      ...object.metadata,
      annotations: { ...(object.metadata.annotations ?? {}), [syncHashAnnotation]: hash },
    },
  };
}

/**
 * Whether the syncer wrote this super object for `tenant`. Pods and namespaces are only ever the
 * syncer's; other kinds must carry its hash, because the super cluster's endpoints controller
 * copies a synced service's labels (the tenant's included) onto the endpoints it makes itself.
 */
export function writtenBySyncer(kind: SyncedKind, object: KubeObject, tenant: string): boolean {
  if (object.metadata.labels?.[syncLabels.tenant] !== tenant) return false;
  return kind === "pod" || kind === "namespace" || syncHashOf(object) !== undefined;
}

export function syncHashOf(object: KubeObject | undefined): string | undefined {
  return object?.metadata.annotations?.[syncHashAnnotation];
}
