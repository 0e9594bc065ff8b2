"use client";

import { useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import { Age } from "@/components/nodes/age";
import { QuotaCard } from "@/components/quotas/quota-card";
import { TenantSyncerSection } from "@/components/syncer/syncer-health";
import { PhaseBadge, Timestamp, timeToReady } from "@/components/tenants/phase";
import { buildTimeline, formatDuration } from "@/components/tenants/provisioning-timeline";
import { TenantActions } from "@/components/tenants/tenant-actions";
import styles from "@/components/tenants/tenant-page.module.css";
import { useTRPC } from "@/components/trpc/client";
import { ConditionsTable, conditionTone } from "@/components/ui/conditions-table";
import { EmptyState } from "@/components/ui/empty-state";
import { EventsTable } from "@/components/ui/events-table";
import { LiveBadge } from "@/components/ui/live-badge";
import { PageHeader } from "@/components/ui/page-header";
import { StatusBadge } from "@/components/ui/status-badge";
import { Timeline } from "@/components/ui/timeline";

/** One Tenant: its state, how it got there, and what an operator can do with it; live over SSE. */
export function TenantDetail({ name }: { name: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data: tenant } = useSuspenseQuery(trpc.tenants.get.queryOptions({ name }));
  const [gone, setGone] = useState(false);
  const feed = useSubscription(
    trpc.tenants.watch.subscriptionOptions(
      { name },
      {
        onData: (detail) => {
          if (detail) queryClient.setQueryData(trpc.tenants.get.queryKey({ name }), detail);
          setGone(detail === null);
        },
      },
    ),
  );

  const timeline = buildTimeline(tenant);
  const servingVersion = tenant.runningVersion ?? "not serving yet";

  return (
    <>
      <PageHeader title={tenant.displayName} description={`Tenant ${tenant.name}`} />
      <p className="toolbar">
        <LiveBadge subject="Tenant" status={feed.status} />
        {tenant.deleting ? <StatusBadge tone="warning">Being deleted</StatusBadge> : null}
      </p>
      {gone ? (
        <p className="alert alert-info" role="status">
          This tenant no longer exists in the super cluster.
        </p>
      ) : null}

      <section className="card" aria-label="Summary">
        <dl className={styles.facts}>
          <div>
            <dt>Phase</dt>
            <dd>
              <PhaseBadge phase={tenant.phase} message={tenant.readyMessage} />
              {tenant.suspended && tenant.phase !== "Suspended" ? " (suspending)" : ""}
            </dd>
          </div>
          <div>
            <dt>Kubernetes version</dt>
            <dd>
              {tenant.version || "—"} <span className="whoami-meta">({servingVersion})</span>
            </dd>
          </div>
          <div>
            <dt>Provisioner</dt>
            <dd>{tenant.provisioner}</dd>
          </div>
          <div>
            <dt>Endpoint</dt>
            <dd>{tenant.endpoint ? <code>{tenant.endpoint}</code> : "—"}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>
              <Timestamp iso={tenant.createdAt} />{" "}
              <span className="whoami-meta">
                (<Age iso={tenant.createdAt} /> ago)
              </span>
            </dd>
          </div>
          <div>
            <dt>Ready</dt>
            <dd>
              <Timestamp iso={tenant.readyAt} />
              {tenant.readyAt ? (
                <span className="whoami-meta">
                  {" "}
                  ({timeToReady(tenant.createdAt, tenant.readyAt)} after creation)
                </span>
              ) : null}
            </dd>
          </div>
        </dl>
      </section>

      <div className={`${styles.columns} ${styles.section}`}>
        <section className="card" aria-labelledby="timeline-heading">
          <h2 id="timeline-heading">Provisioning timeline</h2>
          <Timeline
            label="Provisioning timeline"
            items={timeline.map((step) => ({
              key: step.key,
              title: step.label,
              state: step.state,
              meta: step.at ? (
                <>
                  <Timestamp iso={step.at} />
                  {step.sincePreviousMs !== null ? (
                    <span>+{formatDuration(step.sincePreviousMs)}</span>
                  ) : null}
                </>
              ) : undefined,
              detail: step.detail,
            }))}
          />
        </section>

        <TenantActions tenant={tenant} />
      </div>

      <QuotaCard tenant={tenant.name} />

      <section className={styles.section} aria-labelledby="conditions-heading">
        <h2 id="conditions-heading">Conditions</h2>
        {tenant.conditions.length === 0 ? (
          <EmptyState title="No conditions yet">
            <p>The tenant controller has not reconciled this tenant yet.</p>
          </EmptyState>
        ) : (
          <ConditionsTable
            conditions={tenant.conditions}
            timeHeader="Last transition"
            statusTone={conditionTone}
            renderTime={(iso) => <Timestamp iso={iso} />}
          />
        )}
      </section>

      <TenantSyncerSection tenant={tenant.name} />

      <section className={styles.section} aria-labelledby="events-heading">
        <h2 id="events-heading">Events</h2>
        {tenant.events.length === 0 ? (
          <EmptyState title="No events">
            <p>The controller records an Event on every phase change; Kubernetes keeps them for an hour.</p>
          </EmptyState>
        ) : (
          <EventsTable events={tenant.events} />
        )}
      </section>
    </>
  );
}
