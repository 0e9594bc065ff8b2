/**
 * The pod's spec as the super cluster gets it (pure): no service-account token of either cluster,
 * nothing that names the tenant's scheduling (node, priority, runtime and scheduler), names written
 * the way the super cluster's Pod Security admission reads them, pod (anti-)affinity confined to the
 * tenant's own pods, and the operator's placement merged in.
 */
import { syncAnnotations, syncLabels } from "./contracts";
import { normalizeSysctl } from "./host-access";
import { normalizeCapability } from "./isolation-schema";
import { superNamespace } from "./naming";
import { identitySecretName, type PodApi, withPodIdentity } from "./pod-identity";
import type { Json } from "./synced-kinds";

/** Placement rules an operator sets for a tenant's pods below (merged into every pod). */
export interface PlacementPolicy {
  nodeSelector?: Record<string, string>;
  tolerations?: Json[];
  /**
   * Labels the super cluster's copy of every pod gets besides the tenant's and the syncer's (the
   * local world labels pods so kwok serves their logs and exec: server/cluster/kwok-debug.ts).
   */
  podLabels?: Record<string, string>;
  /**
   * Where the tenant's own pods reach its API server (pod-identity.ts). With it, a pod's
   * service-account tokens are the tenant's, read from the pod's identity secret below; without it
   * (a provisioner that gives pods no address), token volumes are dropped.
   */
  podApi?: PodApi;
  /**
   * The pods' DNS server (server/cluster/real-node/pod-dns.ts), which answers each pod with its own
   * tenant's Services: ClusterFirst pods are pointed at it (dns-config.ts); without it they keep the
   * nodes' resolver.
   */
  podDns?: string;
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
 * And NET_RAW dropped from every container that does not add it itself (which the filter allows only
 * if the operator does): the runtime grants it by default, and with it a pod on the shared bridge
 * could forge frames — answer ARP for another tenant's pod address (Ring0's pod API admits by
 * source address), send IPv6 router adverts (CVE-2020-10749). ping still works without it.
 */
function withCanonicalCapabilities(containers: Json[]): Json[] {
  return containers.map((container) => {
    const context = (container?.securityContext as Json | undefined) ?? {};
    const capabilities = (context.capabilities as Json | undefined) ?? {};
    const canonical: Json = { ...capabilities };
    for (const field of ["add", "drop"]) {
      const names = capabilities[field];
      if (Array.isArray(names)) {
        canonical[field] = names.map((name) => (typeof name === "string" ? normalizeCapability(name) : name));
      }
    }
    const added = Array.isArray(canonical.add) ? canonical.add : [];
    const dropped = Array.isArray(canonical.drop) ? canonical.drop : [];
    if (!added.includes("NET_RAW") && !dropped.includes("NET_RAW") && !dropped.includes("ALL")) {
      canonical.drop = [...dropped, "NET_RAW"];
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
 * Downward API fields that differ below, read from where Ring0 keeps the tenant's values instead:
 * the pod's namespace below is `<prefix>-<namespace>` and its uid is the copy's own, while its
 * annotations carry the tenant's (translate.ts), so a pod sees its tenant's namespace and uid.
 */
const tenantFieldPaths: Record<string, string> = {
  "metadata.namespace": `metadata.annotations['${syncAnnotations.namespace}']`,
  "metadata.uid": `metadata.annotations['${syncAnnotations.uid}']`,
};

function retargeted(fieldRef: unknown): unknown {
  if (!fieldRef || typeof fieldRef !== "object") return fieldRef;
  const path = (fieldRef as Json).fieldPath;
  const mapped = typeof path === "string" ? tenantFieldPaths[path] : undefined;
  return mapped ? { ...(fieldRef as Json), fieldPath: mapped } : fieldRef;
}

function withTenantEnv(containers: Json[]): Json[] {
  return containers.map((container) => {
    if (!Array.isArray(container?.env)) return container;
    const env = container.env.map((variable: Json) => {
      const valueFrom = variable?.valueFrom as Json | undefined;
      return valueFrom?.fieldRef
        ? { ...variable, valueFrom: { ...valueFrom, fieldRef: retargeted(valueFrom.fieldRef) } }
        : variable;
    });
    return { ...container, env };
  });
}

function withTenantItems(source: Json | undefined): Json | undefined {
  if (!source || !Array.isArray(source.items)) return source;
  return {
    ...source,
    items: source.items.map((item: Json) =>
      item?.fieldRef ? { ...item, fieldRef: retargeted(item.fieldRef) } : item,
    ),
  };
}

/** Downward API volumes (plain or projected) reading the tenant's namespace and uid. */
function withTenantDownwardVolumes(volumes: Json[]): Json[] {
  return volumes.map((volume) => {
    if (volume?.downwardAPI) return { ...volume, downwardAPI: withTenantItems(volume.downwardAPI as Json) };
    const projected = volume?.projected as Json | undefined;
    const sources = projected?.sources;
    if (!Array.isArray(sources)) return volume;
    return {
      ...volume,
      projected: {
        ...projected,
        sources: sources.map((source: Json) =>
          source?.downwardAPI
            ? { ...source, downwardAPI: withTenantItems(source.downwardAPI as Json) }
            : source,
        ),
      },
    };
  });
}

/** The tenant's token volumes (kube-api-access-*), which never go below, by name. */
function tokenVolumeNames(spec: Json): Set<string> {
  const volumes = (spec.volumes as Json[] | undefined) ?? [];
  return new Set(volumes.filter(isTenantTokenVolume).map((volume) => String(volume.name)));
}

/** The identity a pod below gets (pod-identity.ts), when the tenant's pods have an API address. */
function identityOf(placement: PlacementPolicy, uid: string | undefined) {
  return placement.podApi && uid ? { secret: identitySecretName(uid), api: placement.podApi } : undefined;
}

/**
 * The pod's ephemeral containers as the super cluster gets them, translated as its other
 * containers are (capability names canonical; its tenant's identity, or no token mount without
 * one). They are added below through the pods/ephemeralcontainers subresource, never with the pod.
 */
export function superEphemeralContainers(spec: Json, placement: PlacementPolicy = {}, uid?: string): Json[] {
  const identity = identityOf(placement, uid);
  const ephemeral = identity
    ? (spec.ephemeralContainers as Json[] | undefined)
    : withoutVolumeMounts(spec.ephemeralContainers, tokenVolumeNames(spec));
  if (!Array.isArray(ephemeral)) return [];
  const containers = withTenantEnv(withCanonicalCapabilities(ephemeral));
  if (!identity) return containers;
  return withPodIdentity({ ephemeralContainers: containers }, identity.secret, identity.api)
    .ephemeralContainers as Json[];
}

/**
 * A running pod's copy keeps what Kubernetes never changes on a running pod and only Ring0's
 * translation could (after an upgrade, or a Tenant's new default runtime class): its runtime class,
 * resolver and volumes, and each container's security context. The tenant's own API server refuses changes to these on a
 * running pod, so the copy's are exact, and the pod's other changes (images, tolerations) still go
 * below instead of the whole update being refused.
 */
export function withImmutableOfRunning(desired: Json, below: Json): Json {
  const copy: Json = { ...desired };
  // Fields a pod's spec never changes once made (a new default or resolver reaches new pods only).
  for (const field of ["runtimeClassName", "dnsPolicy", "dnsConfig", "volumes"]) {
    if (below[field] === undefined) delete copy[field];
    else copy[field] = below[field];
  }
  for (const field of ["containers", "initContainers"]) {
    const running = new Map(
      ((below[field] as Json[] | undefined) ?? []).map((container) => [container?.name, container]),
    );
    if (!Array.isArray(copy[field])) continue;
    copy[field] = (copy[field] as Json[]).map((container) => {
      const now = running.get(container?.name);
      if (!now) return container;
      const kept: Json = { ...container };
      if (now.securityContext === undefined) delete kept.securityContext;
      else kept.securityContext = now.securityContext;
      return kept;
    });
  }
  return copy;
}

/**
 * A strategic merge patch for the pods/resize subresource below: the resources of each container
 * (and restartable init container) whose resources the tenant changed, or null when none differs.
 * A running pod's resources change only through that subresource.
 */
export function resizePatch(desired: Json, below: Json): Json | null {
  const patch: Json = {};
  for (const field of ["containers", "initContainers"]) {
    const current = new Map(
      ((below[field] as Json[] | undefined) ?? []).map((container) => [container.name, container]),
    );
    const changed = ((desired[field] as Json[] | undefined) ?? [])
      .filter((container) => {
        const now = current.get(container.name);
        return (
          now !== undefined &&
          JSON.stringify(container.resources ?? {}) !== JSON.stringify(now.resources ?? {})
        );
      })
      .map((container) => ({ name: container.name, resources: container.resources ?? {} }));
    if (changed.length > 0) patch[field] = changed;
  }
  return Object.keys(patch).length > 0 ? { spec: patch } : null;
}

/**
 * The pod's spec as the super cluster gets it. No service-account token of the super cluster is
 * mounted (automountServiceAccountToken false). The tenant's tokens (kube-api-access-*) and root CA
 * are read from the pod's identity secret, and its containers pointed at `placement.podApi`
 * (pod-identity.ts); without a podApi every projected volume with a token source goes with its
 * mounts, since the super cluster would fill it with a token of its own. `uid` is the tenant pod's
 * (its identity secret's name). The node is the super scheduler's choice; priority
 * classes, runtime classes and scheduler names are the tenant's and mean nothing below. Sysctl and
 * capability names are written the way the super cluster's Pod Security admission reads them. Pod
 * (anti-)affinity is confined to the tenant's own pods ({@link confineAffinity}).
 */
export function superPodSpec(
  spec: Json,
  placement: PlacementPolicy = {},
  tenant?: string,
  uid?: string,
  runtimeClass?: string,
): Json {
  let copy: Json = structuredClone(spec);
  if (tenant !== undefined && copy.affinity !== undefined)
    copy.affinity = confineAffinity(copy.affinity, tenant);
  const identity = identityOf(placement, uid);
  const volumes = (copy.volumes as Json[] | undefined) ?? [];
  const removed = identity ? new Set<string>() : tokenVolumeNames(copy);
  const kept = volumes.filter((volume) => !removed.has(String(volume.name)));
  if (kept.length > 0) copy.volumes = withTenantDownwardVolumes(kept);
  else delete copy.volumes;
  for (const field of ["containers", "initContainers"]) {
    const containers = identity
      ? (copy[field] as Json[] | undefined)
      : withoutVolumeMounts(copy[field], removed);
    if (containers) copy[field] = withTenantEnv(withCanonicalCapabilities(containers));
  }
  if (identity) copy = withPodIdentity(copy, identity.secret, identity.api);
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
    // Set again below from the class the filter allowed; the tenant's class's overhead is the
    // tenant's (the super cluster's class sets its own, and refuses a pod with an overhead and no class).
    "runtimeClassName",
    "overhead",
    "ephemeralContainers",
    "schedulerName",
    "resourceClaims",
    "schedulingGates",
  ]) {
    delete copy[field];
  }
  // The runtime class the isolation filter allowed (the pod's own or the tenant's default); its
  // overhead and scheduling come from the super cluster's class of that name.
  if (runtimeClass) copy.runtimeClassName = runtimeClass;
  if (placement.nodeSelector && Object.keys(placement.nodeSelector).length > 0) {
    copy.nodeSelector = { ...((copy.nodeSelector as Json | undefined) ?? {}), ...placement.nodeSelector };
  }
  if (placement.tolerations && placement.tolerations.length > 0) {
    copy.tolerations = [...((copy.tolerations as Json[] | undefined) ?? []), ...placement.tolerations];
  }
  return copy;
}
