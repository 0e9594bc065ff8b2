/**
 * Kubernetes Events about objects Ring0 reconciles (what `kubectl describe` and the panel's
 * timelines show). Events of cluster-scoped objects live in the "default" namespace, as
 * client-go's recorder does. Recording never throws: a lost event is logged, not fatal.
 */
import type { Logger } from "@/server/logger";
import type { ClusterConnection } from "./cluster";
import { EventKind } from "./kinds/event";
import { kubeRequest } from "./transport";

export interface EventTarget {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
}

export interface RecordedEvent {
  type: "Normal" | "Warning";
  /** UpperCamelCase, e.g. "Provisioning". */
  reason: string;
  message: string;
}

export async function recordEvent(
  conn: ClusterConnection,
  target: EventTarget,
  event: RecordedEvent,
  options: { component?: string; logger?: Logger } = {},
): Promise<void> {
  const namespace = target.namespace ?? "default";
  const now = new Date().toISOString();
  const body = {
    apiVersion: "v1",
    kind: "Event",
    metadata: {
      name: `${target.name}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 6)}`,
      namespace,
    },
    involvedObject: {
      apiVersion: target.apiVersion,
      kind: target.kind,
      name: target.name,
      ...(target.namespace ? { namespace: target.namespace } : {}),
      ...(target.uid ? { uid: target.uid } : {}),
    },
    type: event.type,
    reason: event.reason,
    message: event.message.slice(0, 1024),
    source: { component: options.component ?? "ring0" },
    reportingComponent: options.component ?? "ring0",
    reportingInstance: "ring0",
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
  try {
    await kubeRequest(conn, {
      method: "POST",
      path: EventKind.path({ namespace }),
      body,
      timeoutMs: 10_000,
    });
  } catch (error) {
    options.logger?.warn("recording an event failed", { reason: event.reason, error });
  }
}

export interface ObjectEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  firstAt: string | null;
  lastAt: string | null;
}

/** Events about one object, oldest first. */
export async function listEventsFor(
  conn: ClusterConnection,
  target: Pick<EventTarget, "kind" | "name" | "namespace" | "uid">,
): Promise<ObjectEvent[]> {
  const namespace = target.namespace ?? "default";
  const selector = [`involvedObject.kind=${target.kind}`, `involvedObject.name=${target.name}`];
  if (target.uid) selector.push(`involvedObject.uid=${target.uid}`);
  const list = await kubeRequest<{
    items: {
      type?: string;
      reason?: string;
      message?: string;
      count?: number;
      firstTimestamp?: string;
      lastTimestamp?: string;
      eventTime?: string;
      metadata: { creationTimestamp?: string };
    }[];
  }>(conn, {
    path: EventKind.path({ namespace }),
    query: { fieldSelector: selector.join(",") },
    timeoutMs: 10_000,
  });
  return list.items
    .map((item) => ({
      type: item.type ?? "Normal",
      reason: item.reason ?? "",
      message: item.message ?? "",
      count: item.count ?? 1,
      firstAt: item.firstTimestamp ?? item.eventTime ?? item.metadata.creationTimestamp ?? null,
      lastAt: item.lastTimestamp ?? item.eventTime ?? item.metadata.creationTimestamp ?? null,
    }))
    .sort((a, b) => (a.lastAt ?? "").localeCompare(b.lastAt ?? ""));
}
