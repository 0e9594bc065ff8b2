import Link from "next/link";
import { Age } from "@/components/nodes/age";
import { type Column, DataTable } from "@/components/ui/data-table";

/** One column of a pod table: its header and what each pod shows in it. */
export type PodColumn<Pod> = Column<Pod>;

/**
 * A table of pods, one row each, in the columns the view asks for. The workloads, super-cluster,
 * shared-namespace and node views differ only in their columns and where a pod's name links to.
 */
export function PodTable<Pod extends { namespace: string; name: string }>({
  label,
  pods,
  columns,
  rowTestId,
}: {
  label: string;
  pods: readonly Pod[];
  columns: readonly PodColumn<Pod>[];
  rowTestId?: (pod: Pod) => string;
}) {
  return (
    <DataTable
      label={label}
      rows={pods}
      columns={columns}
      rowKey={(pod) => `${pod.namespace}/${pod.name}`}
      rowTestId={rowTestId}
    />
  );
}

/** The columns every pod view shares. */
export const podColumns = {
  /** The pod's name, linking to its page. */
  name: <Pod extends { namespace: string; name: string }>(href: (pod: Pod) => string): PodColumn<Pod> => ({
    header: "Name",
    cell: (pod) => <Link href={href(pod)}>{pod.name}</Link>,
  }),
  namespace: { header: "Namespace", cell: (pod: { namespace: string }) => pod.namespace },
  ready: { header: "Ready", cell: (pod: { ready: string }) => pod.ready },
  restarts: { header: "Restarts", cell: (pod: { restarts: number }) => pod.restarts },
  age: { header: "Age", cell: (pod: { createdAt: string | null }) => <Age iso={pod.createdAt} /> },
} as const;
