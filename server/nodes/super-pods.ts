/**
 * The super cluster's pods as operators list them (the entry point to the `super-pod` log and
 * shell source), read from the shared `/api/v1/pods` informer the node views already hold, so
 * this page opens no second watch. The row functions are pure (unit-tested).
 */
import { NotFoundError } from "@/server/errors";
import type { V1Pod } from "@/server/k8s/kinds/node";
import { PodKind, type PodSummary, summarisePod } from "@/server/k8s/kinds/pod";
import { liveView, readSynced, requireSuperCluster } from "@/server/k8s/live";
import { syncLabels } from "@/server/syncer/contracts";

type V1ContainerState = NonNullable<NonNullable<V1Pod["status"]>["containerStatuses"]>[number]["state"];

export interface SuperPodRow extends PodSummary {
  /** The tenant whose pod the syncer synced down; null for the super cluster's own pods. */
  tenant: string | null;
}

export interface SuperPodContainer {
  name: string;
  image: string;
  ready: boolean;
  restarts: number;
  /** running, waiting or terminated, with the reason when there is one. */
  state: string;
}

export interface SuperPodDetail extends SuperPodRow {
  podIP: string | null;
  hostIP: string | null;
  containers: SuperPodContainer[];
}

export function superPodRow(pod: V1Pod): SuperPodRow {
  return { ...summarisePod(pod), tenant: pod.metadata?.labels?.[syncLabels.tenant] || null };
}

function containerState(state: V1ContainerState | undefined): string {
  if (state?.running) return "running";
  if (state?.terminated)
    return `terminated (${[state.terminated.reason, `exit code ${state.terminated.exitCode}`]
      .filter(Boolean)
      .join(", ")})`;
  if (state?.waiting?.reason) return `waiting (${state.waiting.reason})`;
  return "waiting";
}

export function superPodDetail(pod: V1Pod): SuperPodDetail {
  const statuses = new Map((pod.status?.containerStatuses ?? []).map((status) => [status.name, status]));
  return {
    ...superPodRow(pod),
    podIP: pod.status?.podIP ?? null,
    hostIP: pod.status?.hostIP ?? null,
    containers: (pod.spec?.containers ?? []).map((container) => {
      const status = statuses.get(container.name);
      return {
        name: container.name,
        image: status?.image || container.image || "",
        ready: status?.ready ?? false,
        restarts: status?.restartCount ?? 0,
        state: containerState(status?.state),
      };
    }),
  };
}

export const byNamespaceAndName = (a: SuperPodRow, b: SuperPodRow) =>
  a.namespace === b.namespace ? a.name.localeCompare(b.name) : a.namespace.localeCompare(b.namespace);

/** The same informer (cluster, path) as server/nodes/service.ts, so both share one watch. */
const podInformer = () => PodKind.informer(requireSuperCluster());

const rows = (pods: V1Pod[]) => pods.map(superPodRow).sort(byNamespaceAndName);

export function listSuperPods(): Promise<SuperPodRow[]> {
  const pods = podInformer();
  return readSynced([pods], "pod list", () => rows(pods.snapshot()));
}

/** The list again after every pod change (coalesced by the informer). */
export function watchSuperPods(signal: AbortSignal | undefined): AsyncGenerator<SuperPodRow[]> {
  const pods = podInformer();
  return liveView([pods], "pod list", () => rows(pods.snapshot()), signal);
}

export function getSuperPod(namespace: string, name: string): Promise<SuperPodDetail> {
  const pods = podInformer();
  return readSynced([pods], "pod list", () => {
    const pod = pods
      .snapshot()
      .find((each) => each.metadata?.namespace === namespace && each.metadata?.name === name);
    if (!pod) throw new NotFoundError(`Pod ${namespace}/${name} was not found in the super cluster.`);
    return superPodDetail(pod);
  });
}
