"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import { PodStreams } from "@/components/streams/pod-streams";
import { useTRPC } from "@/components/trpc/client";
import { ConditionsTable, conditionTone } from "@/components/ui/conditions-table";
import { EmptyState } from "@/components/ui/empty-state";
import { EventsTable } from "@/components/ui/events-table";
import { ControlPlaneNotServing } from "@/components/workloads/not-serving";
import { PodStatusCard } from "@/components/workloads/pod-status";
import { ContainersSection } from "./containers-table";

const isolationCondition = "ring0.dev/Isolation";

/** One pod as the signed-in user sees it: status, containers, events (every 2 s), logs and a shell. */
export function PodDetail({ tenant, namespace, name }: { tenant: string; namespace: string; name: string }) {
  const trpc = useTRPC();
  const { data } = useSuspenseQuery({
    ...trpc.workloads.pods.get.queryOptions({ tenant, namespace, name }),
    refetchInterval: 2_000,
  });
  if (data.state === "not-serving")
    return <ControlPlaneNotServing phase={data.phase} message={data.message} />;
  const { pod, events } = data;

  return (
    <>
      {pod.refused ? (
        <div className="alert alert-error" role="alert" aria-label="Refused by the isolation filter">
          <p style={{ margin: 0 }}>
            <strong>Ring0 will not run this pod on the shared nodes.</strong> {pod.refused}
          </p>
          <p style={{ margin: "0.5rem 0 0" }}>
            A pod's spec cannot be changed in place: fix the manifest, delete this pod and create it again.
          </p>
        </div>
      ) : null}
      <PodStatusCard
        pod={pod}
        headingId="pod-status-heading"
        addresses={{ podIP: pod.podIP, hostIP: pod.hostIP }}
      />

      <section aria-labelledby="pod-conditions-heading" style={{ marginTop: "1.5rem" }}>
        <h2 id="pod-conditions-heading">Conditions</h2>
        {pod.conditions.length === 0 ? (
          <EmptyState title="No conditions yet" />
        ) : (
          <ConditionsTable
            conditions={pod.conditions}
            timeHeader="Last transition"
            statusTone={(condition) =>
              condition.type === isolationCondition && condition.status !== "True"
                ? "failure"
                : conditionTone(condition)
            }
          />
        )}
      </section>

      <ContainersSection id="pod-containers-heading" containers={pod.containers} />

      <section aria-labelledby="pod-events-heading" style={{ marginTop: "1.5rem" }}>
        <h2 id="pod-events-heading">Events</h2>
        {events.state === "forbidden" ? (
          <p className="alert alert-info" role="status">
            You may not read this pod's events: {events.message}
          </p>
        ) : events.items.length === 0 ? (
          <EmptyState title="No events">
            <p>Kubernetes keeps events for an hour.</p>
          </EmptyState>
        ) : (
          <EventsTable events={events.items} showSource />
        )}
      </section>

      <section aria-labelledby="pod-streams-heading" style={{ marginTop: "1.5rem" }}>
        <h2 id="pod-streams-heading">Logs and shell</h2>
        <PodStreams
          source="tenant-pod"
          tenant={tenant}
          namespace={namespace}
          pod={name}
          containers={pod.containers}
        />
      </section>
    </>
  );
}
