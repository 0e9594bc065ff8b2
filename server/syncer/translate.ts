/**
 * What the syncer writes, as pure functions of what it read: the super cluster's copy of a tenant
 * object (downward), the tenant pod's status from the super pod (upward) and a vNode from a super
 * node. Nothing here does I/O, so every rule is unit-tested.
 */
import { createHash } from "node:crypto";
import type { KubeObject } from "@/server/k8s/apply";
import { type IsolationPolicy, syncAnnotations, syncLabels } from "./contracts";
import { normalizeSysctl } from "./host-access";
import { defaultIsolationPolicy, normalizeCapability } from "./isolation-policy";
import { allowListed, withoutRing0OwnedKeys } from "./metadata";
import { superNamespace } from "./naming";
import { podSecurityLabels } from "./pod-security";

/** The kinds the syncer copies down (vNodes and events travel up). */
export type SyncedKind =
  | "namespace"
  | "pod"
  | "service"
  | "endpoints"
  | "configmap"
  | "secret"
  | "serviceaccount";

export const syncedKinds: SyncedKind[] = [
  "namespace",
  "serviceaccount",
  "configmap",
  "secret",
  "service",
  "endpoints",
  "pod",
];

export interface KindInfo {
  apiVersion: string;
  kind: string;
  /** The collection's path segment under /api/v1. */
  resource: string;
  namespaced: boolean;
}

export const kindInfo: Record<SyncedKind, KindInfo> = {
  namespace: { apiVersion: "v1", kind: "Namespace", resource: "namespaces", namespaced: false },
  pod: { apiVersion: "v1", kind: "Pod", resource: "pods", namespaced: true },
  service: { apiVersion: "v1", kind: "Service", resource: "services", namespaced: true },
  endpoints: { apiVersion: "v1", kind: "Endpoints", resource: "endpoints", namespaced: true },
  configmap: { apiVersion: "v1", kind: "ConfigMap", resource: "configmaps", namespaced: true },
  secret: { apiVersion: "v1", kind: "Secret", resource: "secrets", namespaced: true },
  serviceaccount: { apiVersion: "v1", kind: "ServiceAccount", resource: "serviceaccounts", namespaced: true },
};

/** Annotation on super objects: a hash of what the syncer last applied, so unchanged objects are not re-applied. */
export const syncHashAnnotation = "ring0.dev/sync-hash";
/** Label on vNodes in a tenant control plane (what the syncer lists and garbage-collects). */
export const vNodeLabel = "ring0.dev/vnode";
/** Annotation on a vNode that no vn-agent serves (logs and exec cannot reach it). */
export const vnAgentAnnotation = "ring0.dev/vn-agent";
export const defaultKubeletPort = 10250;
/** A tenant object larger than this (serialised) is refused with an event instead of copied. */
export const maxObjectBytes = 512 * 1024;

/** Tenant namespaces that stay in the tenant: node leases are the control plane's own. */
const unsyncedNamespaces = new Set(["kube-node-lease"]);

/** A plain JSON object (the syncer works on API JSON, not client classes). */
export type Json = Record<string, unknown>;

export interface TenantObject extends KubeObject {
  spec?: Json;
  status?: Json;
  data?: Json;
  [key: string]: unknown;
}

export function hashOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}

/**
 * Whether the syncer copies this tenant object down at all. Objects the super cluster makes for
 * itself in every namespace (the root CA config map, the default service account, token secrets)
 * stay out: copying the tenant's would fight the super cluster's own controllers.
 */
export function isSynced(
  kind: SyncedKind,
  object: TenantObject,
  services?: (name: string) => TenantObject | undefined,
): boolean {
  const name = object.metadata.name;
  switch (kind) {
    case "namespace":
      return !unsyncedNamespaces.has(name);
    case "configmap":
      return name !== "kube-root-ca.crt";
    case "secret":
      return object.type !== "kubernetes.io/service-account-token";
    case "serviceaccount":
      return name !== "default";
    case "endpoints": {
      // The super cluster's endpoints controller fills endpoints of services with a selector from
      // the synced pods; only selector-less services need theirs copied.
      const service = services?.(name);
      return Boolean(service) && !(service?.spec as { selector?: unknown } | undefined)?.selector;
    }
    default:
      return true;
  }
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
        ? allowListed(object.metadata.annotations, policy.podAnnotations)
        : withoutRing0OwnedKeys(object.metadata.annotations);
  const annotations: Record<string, string> = { ...tenants };
  delete annotations["kubectl.kubernetes.io/last-applied-configuration"];
  if (namespace !== undefined) annotations[syncAnnotations.namespace] = namespace;
  annotations[syncAnnotations.name] = object.metadata.name;
  if (object.metadata.uid) annotations[syncAnnotations.uid] = object.metadata.uid;
  return annotations;
}

/** Placement rules an operator sets for a tenant's pods below (merged into every pod). */
export interface PlacementPolicy {
  nodeSelector?: Record<string, string>;
  tolerations?: Json[];
  /**
   * Labels the super cluster's copy of every pod gets besides the tenant's and the syncer's (the
   * local world labels pods so kwok serves their logs and exec: server/cluster/kwok-debug.ts).
   */
  podLabels?: Record<string, string>;
}

const serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount";

/** A projected volume holding the tenant's service-account token (kube-api-access-*). */
function isTenantTokenVolume(volume: Json): boolean {
  const sources = (volume.projected as { sources?: Json[] } | undefined)?.sources;
  return Boolean(sources?.some((source) => source.serviceAccountToken));
}

function withoutVolumeMounts(containers: unknown, removed: Set<string>): Json[] | undefined {
  if (!Array.isArray(containers)) return undefined;
  return containers.map((container: Json) => {
    const mounts = (container.volumeMounts as Json[] | undefined)?.filter(
      (mount) => !removed.has(String(mount.name)) && mount.mountPath !== serviceAccountMountPath,
    );
    const copy: Json = { ...container };
    if (mounts && mounts.length > 0) copy.volumeMounts = mounts;
    else delete copy.volumeMounts;
    return copy;
  });
}

/**
 * Capability names as container runtimes and Pod Security admission expect them ("NET_RAW", not
 * "cap_net_raw"): the filter accepts either spelling, the super cluster's admission only this one.
 */
function withCanonicalCapabilities(containers: Json[]): Json[] {
  return containers.map((container) => {
    const context = container?.securityContext as Json | undefined;
    const capabilities = context?.capabilities as Json | undefined;
    if (!capabilities) return container;
    const canonical: Json = { ...capabilities };
    for (const field of ["add", "drop"]) {
      const names = capabilities[field];
      if (Array.isArray(names)) {
        canonical[field] = names.map((name) => (typeof name === "string" ? normalizeCapability(name) : name));
      }
    }
    return { ...container, securityContext: { ...context, capabilities: canonical } };
  });
}

/** One pod (anti-)affinity term, confined to the tenant's own pods (see {@link confineAffinity}). */
function confinedTerm(term: unknown, tenant: string): unknown {
  if (!term || typeof term !== "object") return term;
  const copy: Json = { ...(term as Json) };
  if (Array.isArray(copy.namespaces)) {
    copy.namespaces = copy.namespaces
      .filter((namespace): namespace is string => typeof namespace === "string")
      .map((namespace) => superNamespace(tenant, namespace));
  }
  // Any selector of namespaces (even {}: all of them) means the tenant's own, never another's.
  if (copy.namespaceSelector !== undefined)
    copy.namespaceSelector = { matchLabels: { [syncLabels.tenant]: tenant } };
  if (copy.labelSelector && typeof copy.labelSelector === "object") {
    const selector = copy.labelSelector as Json;
    const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
    copy.labelSelector = {
      ...selector,
      matchExpressions: [...expressions, { key: syncLabels.tenant, operator: "In", values: [tenant] }],
    };
  }
  return copy;
}

/**
 * Pod affinity and anti-affinity below only ever select the tenant's own pods in the tenant's own
 * namespaces: as the tenant wrote them, a term could name another tenant's super namespace (or all
 * namespaces) and that tenant's pod labels, to learn where its pods run or to keep its new pods
 * from scheduling at all.
 */
export function confineAffinity(affinity: unknown, tenant: string): unknown {
  if (!affinity || typeof affinity !== "object") return affinity;
  const copy: Json = { ...(affinity as Json) };
  for (const kind of ["podAffinity", "podAntiAffinity"]) {
    const rules = copy[kind] as Json | undefined;
    if (!rules || typeof rules !== "object") continue;
    const confined: Json = { ...rules };
    const required = rules.requiredDuringSchedulingIgnoredDuringExecution;
    if (Array.isArray(required)) {
      confined.requiredDuringSchedulingIgnoredDuringExecution = required.map((term) =>
        confinedTerm(term, tenant),
      );
    }
    const preferred = rules.preferredDuringSchedulingIgnoredDuringExecution;
    if (Array.isArray(preferred)) {
      confined.preferredDuringSchedulingIgnoredDuringExecution = preferred.map((weighted: Json) =>
        weighted && typeof weighted === "object"
          ? { ...weighted, podAffinityTerm: confinedTerm(weighted.podAffinityTerm, tenant) }
          : weighted,
      );
    }
    copy[kind] = confined;
  }
  return copy;
}

/**
 * The pod's spec as the super cluster gets it. No service-account token of the super cluster is
 * mounted (automountServiceAccountToken false), and every projected volume with a token source
 * goes with its mounts: such a token is the tenant's identity (kube-api-access-*), which the super
 * cluster would replace with one of its own. The node is the super scheduler's choice; priority
 * classes, runtime classes and scheduler names are the tenant's and mean nothing below. Sysctl and
 * capability names are written the way the super cluster's Pod Security admission reads them. Pod
 * (anti-)affinity is confined to the tenant's own pods ({@link confineAffinity}).
 */
export function superPodSpec(spec: Json, placement: PlacementPolicy = {}, tenant?: string): Json {
  const copy: Json = structuredClone(spec);
  if (tenant !== undefined && copy.affinity !== undefined)
    copy.affinity = confineAffinity(copy.affinity, tenant);
  const volumes = (copy.volumes as Json[] | undefined) ?? [];
  const removed = new Set(volumes.filter(isTenantTokenVolume).map((volume) => String(volume.name)));
  const kept = volumes.filter((volume) => !removed.has(String(volume.name)));
  if (kept.length > 0) copy.volumes = kept;
  else delete copy.volumes;
  for (const field of ["containers", "initContainers"]) {
    const containers = withoutVolumeMounts(copy[field], removed);
    if (containers) copy[field] = withCanonicalCapabilities(containers);
  }
  copy.automountServiceAccountToken = false;
  const context = copy.securityContext as Json | undefined;
  if (Array.isArray(context?.sysctls)) {
    context.sysctls = context.sysctls.map((sysctl: Json) =>
      typeof sysctl?.name === "string" ? { ...sysctl, name: normalizeSysctl(sysctl.name) } : sysctl,
    );
  }
  for (const field of [
    "nodeName",
    "serviceAccount",
    "priority",
    "priorityClassName",
    "preemptionPolicy",
    "runtimeClassName",
    "ephemeralContainers",
    "schedulerName",
    "resourceClaims",
    "schedulingGates",
  ]) {
    delete copy[field];
  }
  if (placement.nodeSelector && Object.keys(placement.nodeSelector).length > 0) {
    copy.nodeSelector = { ...((copy.nodeSelector as Json | undefined) ?? {}), ...placement.nodeSelector };
  }
  if (placement.tolerations && placement.tolerations.length > 0) {
    copy.tolerations = [...((copy.tolerations as Json[] | undefined) ?? []), ...placement.tolerations];
  }
  return copy;
}

function serviceSpec(spec: Json): Json {
  const copy: Json = structuredClone(spec);
  // The super cluster allocates its own addresses and ports; the tenant keeps seeing its own.
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
 * namespace, its allow-lists say which namespace labels and pod annotations pass.
 */
export function superObject(
  tenant: string,
  kind: SyncedKind,
  object: TenantObject,
  placement: PlacementPolicy = {},
  policy: IsolationPolicy = defaultIsolationPolicy(),
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
        spec: superPodSpec(object.spec ?? {}, placement, tenant),
      };
    case "service":
      return { ...base, spec: serviceSpec(object.spec ?? {}) };
    case "endpoints":
      return { ...base, ...(object.subsets ? { subsets: object.subsets } : {}) };
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

/** Why a tenant object cannot be copied (too big, or not a well-formed object of its kind), or null. */
export function malformedReason(kind: SyncedKind, object: TenantObject): string | null {
  const size = JSON.stringify(object).length;
  if (size > maxObjectBytes) {
    return `${kindInfo[kind].kind} ${object.metadata.name} is ${size} bytes serialised; the syncer copies objects up to ${maxObjectBytes} bytes.`;
  }
  if (kind === "pod") {
    const containers = (object.spec as { containers?: unknown } | undefined)?.containers;
    if (!Array.isArray(containers) || containers.length === 0) {
      return `Pod ${object.metadata.name} has no containers.`;
    }
  }
  return null;
}

/** The status fields copied up, exactly as the super cluster reports them. */
export const upwardPodStatusFields = [
  "phase",
  "conditions",
  "message",
  "reason",
  "podIP",
  "podIPs",
  "hostIP",
  "hostIPs",
  "startTime",
  "initContainerStatuses",
  "containerStatuses",
  "ephemeralContainerStatuses",
  "resize",
  "resourceClaimStatuses",
] as const;

/**
 * A JSON merge patch turning the tenant pod's status into the super pod's (null removes fields the
 * super cluster does not report), or null when they already agree. Arrays are replaced whole, so
 * conditions and container statuses end up exactly as reported below.
 */
export function podStatusPatch(tenantStatus: Json | undefined, superStatus: Json | undefined): Json | null {
  const patch: Json = {};
  for (const field of upwardPodStatusFields) {
    const want = superStatus?.[field];
    const have = tenantStatus?.[field];
    if (JSON.stringify(want ?? null) === JSON.stringify(have ?? null)) continue;
    patch[field] = want ?? null;
  }
  return Object.keys(patch).length > 0 ? patch : null;
}

/**
 * A JSON merge patch giving the tenant's service the load balancer the super cluster reports for
 * its copy (ingress replaced whole, removed when none), or null when they already agree. Only
 * status.loadBalancer goes up: conditions belong to the tenant's own controllers.
 */
export function serviceStatusPatch(
  tenantStatus: Json | undefined,
  superStatus: Json | undefined,
): Json | null {
  const want = (superStatus?.loadBalancer as Json | undefined)?.ingress;
  const have = (tenantStatus?.loadBalancer as Json | undefined)?.ingress;
  const empty = (ingress: unknown) => !Array.isArray(ingress) || ingress.length === 0;
  if (empty(want) && empty(have)) return null;
  if (JSON.stringify(want ?? null) === JSON.stringify(have ?? null)) return null;
  return { loadBalancer: { ingress: empty(want) ? null : want } };
}

export const isolationConditionType = "ring0.dev/Isolation";

/** Node fields the vNode carries from its super node (the parts that change rarely). */
export function vNodeContent(
  superNode: Json,
  port: number | undefined,
): { labels: Record<string, string>; annotations: Record<string, string>; status: Json } {
  const metadata = (superNode.metadata ?? {}) as { name?: string; labels?: Record<string, string> };
  const status = (superNode.status ?? {}) as Json;
  const labels: Record<string, string> = { [vNodeLabel]: "true" };
  for (const [key, value] of Object.entries(metadata.labels ?? {})) {
    if (
      key.startsWith("kubernetes.io/") ||
      key.startsWith("topology.kubernetes.io/") ||
      key.startsWith("node.kubernetes.io/instance-type")
    ) {
      labels[key] = value;
    }
  }
  const annotations: Record<string, string> = {};
  annotations[vnAgentAnnotation] =
    port === undefined
      ? `none: no vn-agent serves node ${metadata.name ?? ""}; kubectl logs and exec cannot reach its pods`
      : `localhost:${port}`;
  const conditions = ((status.conditions as Json[] | undefined) ?? []).map((condition) => {
    const { lastHeartbeatTime: _heartbeat, ...rest } = condition;
    return rest;
  });
  return {
    labels,
    annotations,
    status: {
      capacity: status.capacity ?? {},
      allocatable: status.allocatable ?? {},
      conditions,
      nodeInfo: status.nodeInfo ?? {},
      addresses: [{ type: "Hostname", address: "localhost" }],
      daemonEndpoints: { kubeletEndpoint: { Port: port ?? defaultKubeletPort } },
    },
  };
}

/** The vNode's status with every condition's heartbeat set to now (Ring0 stands in for the kubelet). */
export function vNodeStatus(content: Json, nowIso: string): Json {
  const conditions: Json[] = ((content.conditions as Json[] | undefined) ?? []).map((condition) => ({
    ...condition,
    lastHeartbeatTime: nowIso,
  }));
  if (!conditions.some((condition) => condition.type === "Ready")) {
    conditions.push({
      type: "Ready",
      status: "True",
      reason: "KubeletReady",
      message: "the super-cluster node reports no Ready condition; Ring0 keeps the vNode Ready",
      lastHeartbeatTime: nowIso,
      lastTransitionTime: nowIso,
    });
  }
  return { ...content, conditions };
}
