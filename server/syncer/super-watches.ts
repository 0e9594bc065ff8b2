/**
 * The super cluster's side of the syncer, one watch each: pods, namespaces, services and claims labelled
 * `ring0.dev/synced=true`, nodes, and events about pods. Each change becomes a key of the tenant it
 * belongs to (read from the sync label and annotations); the caches are also what the reconcilers
 * read the super cluster from.
 */
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { K8sError } from "@/server/k8s/errors";
import { ServiceKind } from "@/server/k8s/kinds/core";
import { EventKind } from "@/server/k8s/kinds/event";
import { NamespaceKind } from "@/server/k8s/kinds/namespace";
import { NodeKind } from "@/server/k8s/kinds/node";
import { PodKind } from "@/server/k8s/kinds/pod";
import type { Logger } from "@/server/logger";
import { syncAnnotations, syncLabels } from "./contracts";
import { BOUNDARY_LABEL } from "./network-policies";
import { nodeNameOf, type Obj, type TenantSession, workKey } from "./session";
import type { Json } from "./synced-kinds";
import { hashOf } from "./translate";
import { vNodeContent } from "./vnode-content";
import { createWatchCache, type WatchCache } from "./watch-cache";

export interface SuperWatchOptions {
  superCluster: ClusterConnection;
  log: Logger;
  serves(tenant: string): boolean;
  enqueue(tenant: string, key: string): void;
  /** The served tenants' sessions (a node's change concerns those with a vNode for it). */
  sessions: ReadonlyMap<string, TenantSession>;
  /** Watch Ring0's boundary NetworkPolicies below too (where they are the wall between tenants). */
  boundaries?: boolean;
}

export interface SuperWatches {
  pods(): WatchCache<Obj> | undefined;
  namespaces(): WatchCache<Obj> | undefined;
  nodes(): WatchCache<Obj> | undefined;
  events(): WatchCache<Obj> | undefined;
  /** Ring0's boundary NetworkPolicies below (SuperWatchOptions.boundaries). */
  boundaries(): WatchCache<Obj> | undefined;
  /** Watch namespaces, pods, nodes and services; resolves once the first three have listed. */
  start(): Promise<void>;
  /** Then watch events about pods (a pod event is copied only for a namespace already known). */
  watchEvents(): void;
  stop(): void;
}

export function createSuperWatches(options: SuperWatchOptions): SuperWatches {
  const { superCluster, log, serves, enqueue, sessions } = options;
  let superPods: WatchCache<Obj> | undefined;
  let superNamespaces: WatchCache<Obj> | undefined;
  let superNodes: WatchCache<Obj> | undefined;
  let superEvents: WatchCache<Obj> | undefined;
  let superServices: WatchCache<Obj> | undefined;
  let superClaims: WatchCache<Obj> | undefined;
  let superBoundaries: WatchCache<Obj> | undefined;

  const reportSuperError = (what: string) => (error: K8sError) =>
    log.debug(`watching ${what} in the super cluster failed`, { error: error.message });

  function onSuperEvent(event: Obj, deleted: boolean): void {
    if (deleted) return;
    const namespace = event.metadata.namespace ?? "";
    const owner = superNamespaces?.get("", namespace);
    const tenant = owner?.metadata.labels?.[syncLabels.tenant];
    const tenantNamespace = owner?.metadata.annotations?.[syncAnnotations.namespace];
    if (!tenant || !tenantNamespace) return;
    enqueue(tenant, workKey("event", tenantNamespace, event.metadata.name));
  }

  /** The served tenant and tenant object a copy below stands for (its labels and annotations), if any. */
  function tenantObjectOf(copy: Obj): { tenant: string; namespace: string; name: string } | undefined {
    const tenant = copy.metadata.labels?.[syncLabels.tenant];
    const namespace = copy.metadata.annotations?.[syncAnnotations.namespace];
    const name = copy.metadata.annotations?.[syncAnnotations.name];
    if (!tenant || !serves(tenant) || namespace === undefined || !name) return undefined;
    return { tenant, namespace, name };
  }

  function onSuperPod(pod: Obj, previous: Obj | undefined): void {
    const of = tenantObjectOf(pod);
    if (!of) return;
    const { tenant } = of;
    enqueue(tenant, workKey("pod", of.namespace, of.name));
    for (const node of new Set([nodeNameOf(pod), nodeNameOf(previous)])) {
      if (node) enqueue(tenant, workKey("node", "", node));
    }
  }

  function onSuperNamespace(namespace: Obj, _previous: Obj | undefined, deleted: boolean): void {
    const tenant = namespace.metadata.labels?.[syncLabels.tenant];
    const tenantNamespace = namespace.metadata.annotations?.[syncAnnotations.namespace];
    if (!tenant || tenantNamespace === undefined) return;
    if (deleted || namespace.metadata.deletionTimestamp)
      sessions.get(tenant)?.namespaces.delete(tenantNamespace);
    if (deleted) enqueue(tenant, workKey("namespace", "", tenantNamespace));
  }

  /** A synced service's load balancer changed below (or the copy went): its tenant's key again. */
  function onSuperService(service: Obj, previous: Obj | undefined, deleted: boolean): void {
    const of = tenantObjectOf(service);
    if (!of) return;
    const loadBalancer = (object: Obj | undefined) =>
      JSON.stringify((object?.status as Json | undefined)?.loadBalancer ?? null);
    if (deleted || loadBalancer(service) !== loadBalancer(previous))
      enqueue(of.tenant, workKey("service", of.namespace, of.name));
  }

  /** A synced claim was bound below (or its copy went): its tenant's key again, to bind it up. */
  function onSuperClaim(claim: Obj, previous: Obj | undefined, deleted: boolean): void {
    const of = tenantObjectOf(claim);
    if (!of) return;
    const binding = (object: Obj | undefined) =>
      `${(object?.spec as Json | undefined)?.volumeName ?? ""}|${(object?.status as Json | undefined)?.phase ?? ""}`;
    if (deleted || binding(claim) !== binding(previous))
      enqueue(of.tenant, workKey("persistentvolumeclaim", of.namespace, of.name));
  }

  /** A boundary policy changed or went below (anyone but Ring0 touching it): its namespace again, to restore it. */
  function onSuperBoundary(policy: Obj): void {
    const tenant = policy.metadata.labels?.[BOUNDARY_LABEL];
    const tenantNamespace = policy.metadata.annotations?.[syncAnnotations.namespace];
    if (!tenant || !serves(tenant) || tenantNamespace === undefined) return;
    enqueue(tenant, workKey("namespace", "", tenantNamespace));
  }

  function onSuperNode(node: Obj, previous: Obj | undefined): void {
    const changed =
      !previous ||
      hashOf(vNodeContent(node as Json, undefined)) !== hashOf(vNodeContent(previous as Json, undefined));
    if (!changed) return;
    for (const session of sessions.values()) {
      if (session.vNodes.get("", node.metadata.name))
        enqueue(session.tenant, workKey("node", "", node.metadata.name));
    }
  }

  return {
    pods: () => superPods,
    namespaces: () => superNamespaces,
    nodes: () => superNodes,
    events: () => superEvents,
    boundaries: () => superBoundaries,

    async start() {
      superNamespaces = createWatchCache<Obj>(
        superCluster,
        { path: NamespaceKind.path(), labelSelector: `${syncLabels.managed}=true` },
        onSuperNamespace,
        reportSuperError("namespaces"),
      );
      superPods = createWatchCache<Obj>(
        superCluster,
        { path: PodKind.path(), labelSelector: `${syncLabels.managed}=true` },
        onSuperPod,
        reportSuperError("pods"),
      );
      superNodes = createWatchCache<Obj>(
        superCluster,
        { path: NodeKind.path() },
        onSuperNode,
        reportSuperError("nodes"),
      );
      superServices = createWatchCache<Obj>(
        superCluster,
        { path: ServiceKind.path(), labelSelector: `${syncLabels.managed}=true` },
        onSuperService,
        reportSuperError("services"),
      );
      superClaims = createWatchCache<Obj>(
        superCluster,
        { path: "/api/v1/persistentvolumeclaims", labelSelector: `${syncLabels.managed}=true` },
        onSuperClaim,
        reportSuperError("claims"),
      );
      if (options.boundaries) {
        superBoundaries = createWatchCache<Obj>(
          superCluster,
          { path: "/apis/networking.k8s.io/v1/networkpolicies", labelSelector: BOUNDARY_LABEL },
          onSuperBoundary,
          reportSuperError("boundary policies"),
        );
      }
      await Promise.all(
        [superNamespaces, superPods, superNodes, superBoundaries].map((cache) => cache?.synced()),
      );
    },

    watchEvents() {
      superEvents = createWatchCache<Obj>(
        superCluster,
        { path: EventKind.path(), fieldSelector: "involvedObject.kind=Pod" },
        (event, _previous, deleted) => onSuperEvent(event, deleted),
        reportSuperError("events"),
      );
    },

    stop() {
      for (const cache of [
        superPods,
        superNamespaces,
        superNodes,
        superEvents,
        superServices,
        superClaims,
        superBoundaries,
      ])
        cache?.stop();
    },
  };
}
