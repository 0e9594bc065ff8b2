/**
 * The tenant's pods, read as the signed-in user: every request goes to the tenant's control plane
 * with that user impersonated (server/k8s/control-plane-client.ts), so its RBAC decides what they see.
 */
import type { SessionUser } from "@/server/core/roles";
import { controlPlaneClient } from "@/server/impersonation/as-user";
import { ControlPlaneNotServingError } from "@/server/k8s/control-plane-client";
import { K8sError } from "@/server/k8s/errors";
import { EventKind } from "@/server/k8s/kinds/event";
import { NamespaceKind } from "@/server/k8s/kinds/namespace";
import type { V1Pod } from "@/server/k8s/kinds/node";
import {
  byNamespacedName,
  type ContainerSummary,
  PodKind,
  type PodSummary,
  summariseContainers,
  summarisePod,
} from "@/server/k8s/kinds/pod";

/** The condition the syncer's isolation filter sets on a pod it refused (server/syncer/translate.ts). */
export const isolationCondition = "ring0.dev/Isolation";

export interface Acting {
  user: Pick<SessionUser, "subject" | "role" | "tenant">;
  tenant: string;
}

/** A pod as a row of the Workloads page (its node is the vNode it is bound to). */
export interface PodRow extends PodSummary {
  /** The pod's uid in the tenant (its copy below carries it: usage is matched by it). */
  uid: string | null;
  /** Set when the isolation filter refused the pod. */
  refused: string | null;
  /**
   * The pod's controlling owner (the ownerReference with `controller: true`), as is: a Deployment's
   * pods show their ReplicaSet. Resolving that to the Deployment would take a ReplicaSet list and
   * watch as the user (who may not be allowed either) next to the pod feed, so the Workloads page
   * groups by the direct owner; during a rollout a Deployment's pods are two groups.
   */
  owner: { kind: string; name: string } | null;
}

export interface NotServing {
  state: "not-serving";
  phase: string;
  message: string;
}

export type PodList = { state: "serving"; pods: PodRow[] } | NotServing;

export type ContainerRow = ContainerSummary;

export interface PodConditionRow {
  type: string;
  status: string;
  reason: string | null;
  message: string | null;
  lastTransitionTime: string | null;
}

export interface PodEventRow {
  type: string;
  reason: string;
  message: string;
  count: number;
  lastAt: string | null;
  source: string | null;
}

export type PodEvents = { state: "listed"; items: PodEventRow[] } | { state: "forbidden"; message: string };

export type PodView =
  | {
      state: "serving";
      pod: PodRow & {
        podIP: string | null;
        hostIP: string | null;
        conditions: PodConditionRow[];
        containers: ContainerRow[];
      };
      events: PodEvents;
    }
  | NotServing;

interface EventObject {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
  metadata?: { creationTimestamp?: string };
  source?: { component?: string };
  reportingComponent?: string;
}

const iso = (value: unknown): string | null => (value ? new Date(String(value)).toISOString() : null);

/** A pod as a row of the Workloads page. */
export function podRow(pod: V1Pod): PodRow {
  const controller = pod.metadata?.ownerReferences?.find((reference) => reference.controller === true);
  const refusal = pod.status?.conditions?.find(
    (condition) => condition.type === isolationCondition && condition.status !== "True",
  );
  return {
    ...summarisePod(pod),
    uid: pod.metadata?.uid ?? null,
    refused: refusal ? refusal.message || refusal.reason || "Refused by the isolation filter." : null,
    owner: controller ? { kind: controller.kind, name: controller.name } : null,
  };
}

export const byName = byNamespacedName;

/** A control plane that is not up is a state of the page, not a failure of it. */
async function serving<T>(read: () => Promise<T>): Promise<T | NotServing> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ControlPlaneNotServingError)
      return { state: "not-serving", phase: error.phase, message: error.message };
    throw error;
  }
}

const forbidden = (error: unknown) => error instanceof K8sError && error.status === 403;

async function get<T>({ user, tenant }: Acting, path: string): Promise<T> {
  return controlPlaneClient().request<T>(tenant, user, { path });
}

/**
 * The pods of `namespace`, or of every namespace the user may list pods in: cluster-wide when
 * RBAC allows that, otherwise namespace by namespace (skipping those it refuses).
 */
export function listPods(acting: Acting, namespace?: string): Promise<PodList> {
  return serving(async () => {
    const podsIn = (ns: string) => get<{ items?: V1Pod[] }>(acting, PodKind.path({ namespace: ns }));
    if (namespace) {
      const list = await podsIn(namespace);
      return { state: "serving" as const, pods: (list.items ?? []).map(podRow).sort(byName) };
    }
    try {
      const list = await get<{ items?: V1Pod[] }>(acting, PodKind.path());
      return { state: "serving" as const, pods: (list.items ?? []).map(podRow).sort(byName) };
    } catch (error) {
      if (!forbidden(error)) throw error;
      // Without a cluster-wide grant, per namespace; the namespace list's refusal is the answer.
      const namespaces = await get<{ items?: { metadata: { name: string } }[] }>(
        acting,
        NamespaceKind.path(),
      );
      let refused = 0;
      const lists = await Promise.all(
        (namespaces.items ?? []).map((item) =>
          podsIn(item.metadata.name).catch((reason: unknown): { items?: V1Pod[] } => {
            if (!forbidden(reason)) throw reason;
            refused += 1;
            return { items: [] };
          }),
        ),
      );
      // Refused in every namespace: the user may list no pods at all, which the refusal says.
      if (refused > 0 && refused === lists.length) throw error;
      return {
        state: "serving" as const,
        pods: lists.flatMap((list) => (list.items ?? []).map(podRow)).sort(byName),
      };
    }
  });
}

function eventRow(event: EventObject): PodEventRow {
  return {
    type: event.type ?? "Normal",
    reason: event.reason ?? "",
    message: event.message ?? "",
    count: event.count ?? 1,
    lastAt: iso(
      event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp ?? event.metadata?.creationTimestamp,
    ),
    source: event.source?.component || event.reportingComponent || null,
  };
}

/** One pod with its containers, status and events (events the user may not read are said so). */
export function getPod(acting: Acting, namespace: string, name: string): Promise<PodView> {
  return serving(async () => {
    const pod = await get<V1Pod>(acting, PodKind.path({ namespace, name }));
    const selector = encodeURIComponent(`involvedObject.kind=Pod,involvedObject.name=${name}`);
    let events: PodEvents;
    try {
      const list = await get<{ items?: EventObject[] }>(
        acting,
        `${EventKind.path({ namespace })}?fieldSelector=${selector}`,
      );
      const items = (list.items ?? []).map(eventRow);
      items.sort((a, b) => (a.lastAt ?? "").localeCompare(b.lastAt ?? ""));
      events = { state: "listed", items };
    } catch (error) {
      if (!forbidden(error)) throw error;
      events = { state: "forbidden", message: (error as Error).message };
    }
    return {
      state: "serving" as const,
      pod: {
        ...podRow(pod),
        podIP: pod.status?.podIP ?? null,
        hostIP: pod.status?.hostIP ?? null,
        conditions: (pod.status?.conditions ?? []).map((condition) => ({
          type: condition.type,
          status: condition.status,
          reason: condition.reason ?? null,
          message: condition.message ?? null,
          lastTransitionTime: iso(condition.lastTransitionTime),
        })),
        containers: summariseContainers(pod),
      },
      events,
    };
  });
}
