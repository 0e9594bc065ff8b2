import type { Metadata } from "next";
import Link from "next/link";
import { MultiPodLogs } from "@/components/streams/multi-pod-logs";
import {
  maxPodsPerView,
  parsePodSelection,
  parseWorkloadOfSelection,
} from "@/components/streams/pod-selection";
import { PageHeader } from "@/components/ui/page-header";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Logs of several pods" };

type Props = {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<{ pod?: string | string[]; workload?: string | string[]; of?: string | string[] }>;
};

/** Several pods' logs merged by time (chosen on the Workloads page); each stream is authorised on open. */
export default async function MultiPodLogsPage(props: Props) {
  const { tenant } = await requireTenant((await props.params).tenant);
  const search = await props.searchParams;
  const { pods, problem } = parsePodSelection(search.pod);
  // Set by a workload's "Logs" link on the Workloads page: which owner, and how many pods it had.
  const workload = pods.length > 0 ? parseWorkloadOfSelection(search) : null;
  return (
    <>
      <p>
        <Link href={`/t/${tenant}/workloads`}>← Workloads</Link>
      </p>
      <PageHeader
        title={
          workload
            ? `Logs of ${workload.kind} ${workload.name}`
            : pods.length > 0
              ? `Logs of ${pods.length} pods`
              : "Logs of several pods"
        }
        description={
          pods.length > 0
            ? `${pods.map((pod) => `${pod.namespace}/${pod.name}`).join(", ")}: merged by time, a colour per pod.`
            : undefined
        }
      />
      {workload && workload.total > pods.length ? (
        <p className="alert alert-info" role="status" aria-label="Pods left out">
          {workload.kind} {workload.name} has {workload.total} pods; a view reads at most {maxPodsPerView} at
          once, so this shows {pods.length} of them (running pods first, then the newest).
        </p>
      ) : null}
      {problem ? (
        <p className="alert alert-error" role="alert">
          {problem}
        </p>
      ) : (
        <MultiPodLogs tenant={tenant} pods={pods} />
      )}
    </>
  );
}
