/**
 * What a control plane's pods say about it, as pure functions of the Pod objects (unit-tested;
 * ./provisioner.ts reads the pods).
 */
export interface Pod {
  metadata: { name: string; deletionTimestamp?: string; labels?: Record<string, string> };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: {
      name: string;
      ready?: boolean;
      state?: {
        waiting?: { reason?: string; message?: string };
        terminated?: { reason?: string; exitCode?: number };
      };
      lastState?: { terminated?: { finishedAt?: string } };
    }[];
  };
}

/** Waiting reasons that retrying will not get past on its own. */
const failingReasons = new Set([
  "CrashLoopBackOff",
  "ImagePullBackOff",
  "ErrImagePull",
  "ErrImageNeverPull",
  "InvalidImageName",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
]);

/** Why a pod is not ready, for a person ("etcd-0: Pending (Unschedulable: 0/3 nodes…)"). */
export function podWaitingFor(pod: Pod): string {
  const status = pod.status ?? {};
  if (pod.metadata.deletionTimestamp) return `${pod.metadata.name}: terminating`;
  const waiting = status.containerStatuses?.find((container) => container.state?.waiting?.reason);
  if (waiting?.state?.waiting) return `${pod.metadata.name}: ${waiting.name} ${waiting.state.waiting.reason}`;
  const unscheduled = status.conditions?.find((c) => c.type === "PodScheduled" && c.status === "False");
  if (unscheduled) {
    return `${pod.metadata.name}: ${status.phase ?? "Pending"} (${unscheduled.reason ?? "not scheduled"}${unscheduled.message ? `: ${unscheduled.message}` : ""})`;
  }
  return `${pod.metadata.name}: ${status.phase ?? "Pending"}, not ready`;
}

/** A pod stuck in a way that needs a person (bad image, crash loop), as a message; else undefined. */
export function podFailure(pod: Pod): string | undefined {
  const status = pod.status ?? {};
  if (status.phase === "Failed") {
    return `${pod.metadata.name} failed${status.reason ? ` (${status.reason})` : ""}${status.message ? `: ${status.message}` : ""}`;
  }
  for (const container of status.containerStatuses ?? []) {
    const waiting = container.state?.waiting;
    if (waiting?.reason && failingReasons.has(waiting.reason)) {
      return `${pod.metadata.name}: container ${container.name} is in ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ""}`;
    }
  }
  return undefined;
}

export function isPodReady(pod: Pod): boolean {
  return (
    !pod.metadata.deletionTimestamp &&
    pod.status?.phase === "Running" &&
    (pod.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
  );
}

/** How long after a container ended an unready pod of it still counts as exited (being restarted). */
const RECENTLY_ENDED_MS = 120_000;

/**
 * Why `component` of a control plane is not running, when it exited: no pod of it ready, and one
 * whose container ended (terminated now, in a crash loop, or ended within the last two minutes
 * and not ready since, while the kubelet restarts it); or no pod of it at all. A pod that is only
 * starting or failing its readiness check is not an exit (the API server's /readyz says the rest).
 * `nameLabel` is the label naming the component on its pods.
 */
export function componentExited(
  pods: Pod[],
  component: string,
  nameLabel: string,
  now: Date,
): string | undefined {
  const own = pods.filter((pod) => pod.metadata.labels?.[nameLabel] === component);
  if (own.length === 0) return `no ${component} pod`;
  if (own.some(isPodReady)) return undefined;
  const ended = own.find((pod) =>
    (pod.status?.containerStatuses ?? []).some((container) => {
      if (container.state?.terminated) return true;
      if (container.state?.waiting?.reason === "CrashLoopBackOff") return true;
      const finished = Date.parse(container.lastState?.terminated?.finishedAt ?? "");
      return !container.ready && Number.isFinite(finished) && now.getTime() - finished < RECENTLY_ENDED_MS;
    }),
  );
  return ended ? `${podWaitingFor(ended)} (its container ended)` : undefined;
}
