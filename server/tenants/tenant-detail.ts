/**
 * One tenant as its page shows it: the summary, the status in detail (timings, conditions) and
 * its Events, read once or followed live from the shared Tenant informer.
 */
import type { ClusterConnection } from "@/server/k8s/cluster";
import { listEventsFor, type ObjectEvent } from "@/server/k8s/events";
import { readSynced, requireSuperCluster } from "@/server/k8s/live";
import {
  getTenant,
  isoOrNull,
  summariseTenant,
  type TenantResource,
  type TenantSummary,
  tenantInformer,
  tenantKind,
  tenantNotFound,
} from "./tenant-resources";

/** One tenant as its page shows it: the summary, the status in detail and its Events. */
export interface TenantDetail extends TenantSummary {
  uid: string | null;
  generation: number | null;
  observedGeneration: number | null;
  endpoint: string | null;
  deleting: boolean;
  timings: {
    createdAt: string | null;
    provisioningStartedAt: string | null;
    controlPlaneReadyAt: string | null;
    readyAt: string | null;
    lastReadyAt: string | null;
  };
  conditions: {
    type: string;
    status: string;
    reason: string | null;
    message: string | null;
    lastTransitionTime: string | null;
  }[];
  /** Events about this Tenant (this incarnation: matched by uid), oldest first. */
  events: ObjectEvent[];
}

export function describeTenant(tenant: TenantResource, events: ObjectEvent[]): TenantDetail {
  const status = tenant.status;
  const timings = status?.timings ?? {};
  return {
    ...summariseTenant(tenant),
    uid: tenant.metadata.uid ?? null,
    generation: tenant.metadata.generation ?? null,
    observedGeneration: status?.observedGeneration ?? null,
    endpoint: status?.endpoint || null,
    deleting: Boolean(tenant.metadata.deletionTimestamp),
    timings: {
      createdAt: isoOrNull(timings.createdAt) ?? isoOrNull(tenant.metadata.creationTimestamp),
      provisioningStartedAt: isoOrNull(timings.provisioningStartedAt),
      controlPlaneReadyAt: isoOrNull(timings.controlPlaneReadyAt),
      readyAt: isoOrNull(timings.readyAt),
      lastReadyAt: isoOrNull(timings.lastReadyAt),
    },
    conditions: (status?.conditions ?? []).map((condition) => ({
      type: condition.type,
      status: condition.status,
      reason: condition.reason || null,
      message: condition.message || null,
      lastTransitionTime: isoOrNull(condition.lastTransitionTime),
    })),
    events,
  };
}

function tenantEvents(cluster: ClusterConnection, tenant: TenantResource): Promise<ObjectEvent[]> {
  return listEventsFor(cluster, {
    kind: tenantKind,
    name: tenant.metadata.name,
    ...(tenant.metadata.uid ? { uid: tenant.metadata.uid } : {}),
  });
}

/** One tenant with its status and Events; NotFoundError when there is no such Tenant. */
export async function getTenantDetail(name: string): Promise<TenantDetail> {
  const tenant = await getTenant(name);
  if (!tenant) throw tenantNotFound(name);
  return describeTenant(tenant, await tenantEvents(requireSuperCluster(), tenant));
}

/**
 * One tenant, live (SSE): yields its detail once synced and again whenever the Tenant changes or
 * its Events do (Events are read every `eventPollMs`; there is no informer for them). Yields null
 * once the Tenant is gone. Unchanged details are not sent again.
 */
export async function* watchTenantDetail(
  name: string,
  signal: AbortSignal | undefined,
  eventPollMs = 3_000,
): AsyncGenerator<TenantDetail | null> {
  const cluster = requireSuperCluster();
  const informer = tenantInformer(cluster);
  let wake: (() => void) | null = null;
  const release = informer.subscribe(() => wake?.());
  const aborted = () => wake?.();
  signal?.addEventListener("abort", aborted);
  try {
    await readSynced([informer], "tenant", () => undefined);
    let sent: string | undefined;
    let events: ObjectEvent[] = [];
    let eventsOf: string | undefined;
    while (!signal?.aborted) {
      const tenant = informer.snapshot().find((candidate) => candidate.metadata.name === name);
      let detail: TenantDetail | null = null;
      if (tenant) {
        if (eventsOf !== tenant.metadata.uid) events = [];
        try {
          events = await tenantEvents(cluster, tenant);
          eventsOf = tenant.metadata.uid;
        } catch {
          // Events are best effort: keep showing the last ones read rather than dropping the feed.
        }
        detail = describeTenant(tenant, events);
      }
      const serialised = JSON.stringify(detail);
      if (serialised !== sent) {
        sent = serialised;
        yield detail;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, eventPollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  } finally {
    signal?.removeEventListener("abort", aborted);
    release();
  }
}
