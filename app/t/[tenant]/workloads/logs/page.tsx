import type { Metadata } from "next";
import Link from "next/link";
import { MultiPodLogs } from "@/components/streams/multi-pod-logs";
import { parsePodSelection } from "@/components/streams/pod-selection";
import { PageHeader } from "@/components/ui/page-header";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Logs of several pods" };

type Props = {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<{ pod?: string | string[] }>;
};

/** Several pods' logs merged by time (chosen on the Workloads page); each stream is authorised on open. */
export default async function MultiPodLogsPage(props: Props) {
  const { tenant } = await requireTenant((await props.params).tenant);
  const { pods, problem } = parsePodSelection((await props.searchParams).pod);
  return (
    <>
      <p>
        <Link href={`/t/${tenant}/workloads`}>← Workloads</Link>
      </p>
      <PageHeader
        title={pods.length > 0 ? `Logs of ${pods.length} pods` : "Logs of several pods"}
        description={
          pods.length > 0
            ? `${pods.map((pod) => `${pod.namespace}/${pod.name}`).join(", ")}: merged by time, a colour per pod.`
            : undefined
        }
      />
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
