import Link from "next/link";
import type { ReactNode } from "react";
import { Age } from "@/components/nodes/age";

/** One column of a pod table: its header and what each pod shows in it. */
export interface PodColumn<Pod> {
  header: ReactNode;
  cell: (pod: Pod) => ReactNode;
}

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
    <table className="data" aria-label={label}>
      <thead>
        <tr>
          {columns.map((column, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a view's columns are fixed
            <th key={index} scope="col">
              {column.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {pods.map((pod) => (
          <tr key={`${pod.namespace}/${pod.name}`} data-testid={rowTestId?.(pod)}>
            {columns.map((column, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a view's columns are fixed
              <td key={index}>{column.cell(pod)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
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
