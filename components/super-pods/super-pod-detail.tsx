"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Age } from "@/components/nodes/age";
import { PodStreams } from "@/components/streams/pod-streams";
import { useTRPC } from "@/components/trpc/client";
import { ContainersSection } from "@/components/workloads/containers-table";
import { PodPhase } from "@/components/workloads/pod-phase";

/** A super-cluster pod for operators: status, containers, and its logs and shell (`super-pod` source). */
export function SuperPodDetail({ namespace, name }: { namespace: string; name: string }) {
  const trpc = useTRPC();
  const { data: pod } = useSuspenseQuery({
    ...trpc.superPods.get.queryOptions({ namespace, name }),
    refetchInterval: 5_000,
  });

  return (
    <>
      <section className="card" aria-labelledby="super-pod-status-heading">
        <h2 id="super-pod-status-heading">Status</h2>
        <dl
          style={{ display: "grid", gridTemplateColumns: "max-content 1fr", gap: "0.5rem 1.5rem", margin: 0 }}
        >
          <dt>Phase</dt>
          <dd>
            <PodPhase phase={pod.phase} />
          </dd>
          <dt>Node</dt>
          <dd>
            {pod.node ? (
              <Link href={`/operator/nodes/${encodeURIComponent(pod.node)}`}>{pod.node}</Link>
            ) : (
              "not scheduled"
            )}
          </dd>
          <dt>Tenant</dt>
          <dd>
            {pod.tenant ? (
              <Link href={`/operator/tenants/${encodeURIComponent(pod.tenant)}`}>{pod.tenant}</Link>
            ) : (
              "none (the super cluster's own pod)"
            )}
          </dd>
          <dt>Pod IP</dt>
          <dd>{pod.podIP ?? "—"}</dd>
          <dt>Host IP</dt>
          <dd>{pod.hostIP ?? "—"}</dd>
          <dt>Restarts</dt>
          <dd>{pod.restarts}</dd>
          <dt>Age</dt>
          <dd>
            <Age iso={pod.createdAt} />
          </dd>
        </dl>
      </section>

      <ContainersSection id="super-pod-containers-heading" containers={pod.containers} />

      <section aria-labelledby="super-pod-streams-heading" style={{ marginTop: "1.5rem" }}>
        <h2 id="super-pod-streams-heading">Logs and shell</h2>
        <p className="alert alert-info">
          These streams use Ring0&apos;s own credentials for the super cluster, not a tenant&apos;s RBAC.
          {pod.tenant ? ` This pod belongs to tenant ${pod.tenant};` : ""} a shell here is recorded and
          audited as <code>super-pod.exec</code>.
        </p>
        <PodStreams source="super-pod" namespace={pod.namespace} pod={pod.name} containers={pod.containers} />
      </section>
    </>
  );
}
