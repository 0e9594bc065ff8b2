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

/**
 * Why `component` of a control plane does not serve, when none of its pods is ready (a container
 * that exited is not ready at once; the kubelet restarts it); undefined while one is. `nameLabel`
 * is the label naming the component on its pods.
 */
export function componentDown(pods: Pod[], component: string, nameLabel: string): string | undefined {
  const own = pods.filter((pod) => pod.metadata.labels?.[nameLabel] === component);
  if (own.some(isPodReady)) return undefined;
  const pod = own.find((candidate) => !candidate.metadata.deletionTimestamp) ?? own[0];
  return pod ? podWaitingFor(pod) : `no ${component} pod`;
}
