import { describe, expect, it } from "vitest";
import { componentExited, isPodReady, type Pod, podFailure, podWaitingFor } from "./status";

const ready: Pod = {
  metadata: { name: "kube-apiserver-abc" },
  status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
};

describe("control plane pod status", () => {
  it("counts a running pod with a Ready condition as ready, nothing else", () => {
    expect(isPodReady(ready)).toBe(true);
    expect(isPodReady({ metadata: { name: "etcd-0" }, status: { phase: "Pending" } })).toBe(false);
    expect(
      isPodReady({ ...ready, metadata: { ...ready.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } }),
    ).toBe(false);
  });

  it("names an image pull or crash loop as a failure, with the kubelet's message", () => {
    const pulling: Pod = {
      metadata: { name: "kube-apiserver-abc" },
      status: {
        phase: "Pending",
        containerStatuses: [
          {
            name: "kube-apiserver",
            state: { waiting: { reason: "ImagePullBackOff", message: "not found" } },
          },
        ],
      },
    };
    expect(podFailure(pulling)).toBe(
      "kube-apiserver-abc: container kube-apiserver is in ImagePullBackOff: not found",
    );
    expect(podFailure({ metadata: { name: "etcd-0" }, status: { phase: "Failed", reason: "Evicted" } })).toBe(
      "etcd-0 failed (Evicted)",
    );
    expect(podFailure(ready)).toBeUndefined();
    expect(
      podFailure({
        metadata: { name: "etcd-0" },
        status: {
          containerStatuses: [{ name: "etcd", state: { waiting: { reason: "ContainerCreating" } } }],
        },
      }),
    ).toBeUndefined();
  });

  it("says why a pod is not ready yet", () => {
    expect(
      podWaitingFor({
        metadata: { name: "etcd-0" },
        status: {
          phase: "Pending",
          conditions: [
            { type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/3 nodes" },
          ],
        },
      }),
    ).toBe("etcd-0: Pending (Unschedulable: 0/3 nodes)");
    expect(
      podWaitingFor({
        metadata: { name: "etcd-0" },
        status: {
          containerStatuses: [{ name: "etcd", state: { waiting: { reason: "ContainerCreating" } } }],
        },
      }),
    ).toBe("etcd-0: etcd ContainerCreating");
  });

  it("finds a component exited when its container ended and no pod of it is ready, not when it only starts", () => {
    const name = "app.kubernetes.io/name";
    const now = new Date("2026-11-27T05:00:00Z");
    const labelled = (pod: Pod, component: string): Pod => ({
      ...pod,
      metadata: { ...pod.metadata, labels: { [name]: component } },
    });
    const unready = (containerStatuses: NonNullable<Pod["status"]>["containerStatuses"]): Pod => ({
      metadata: { name: "kube-apiserver-xyz" },
      status: { phase: "Running", conditions: [{ type: "Ready", status: "False" }], containerStatuses },
    });
    const exited = unready([
      { name: "kube-apiserver", state: { terminated: { reason: "Error", exitCode: 137 } } },
    ]);
    const restarting = unready([
      {
        name: "kube-apiserver",
        ready: false,
        state: {},
        lastState: { terminated: { finishedAt: "2026-11-27T04:59:50Z" } },
      },
    ]);
    const starting = unready([{ name: "kube-apiserver", ready: false, state: {} }]);
    const long = unready([
      {
        name: "kube-apiserver",
        ready: false,
        state: {},
        lastState: { terminated: { finishedAt: "2026-11-27T04:50:00Z" } },
      },
    ]);
    const exitedFor = (pod: Pod) =>
      componentExited([labelled(pod, "kube-apiserver")], "kube-apiserver", name, now);
    expect(exitedFor(exited)).toBe("kube-apiserver-xyz: Running, not ready (its container ended)");
    expect(exitedFor(restarting)).toContain("its container ended");
    // Starting, or unready long after its last exit: for /readyz to judge, not an exit.
    expect(exitedFor(starting)).toBeUndefined();
    expect(exitedFor(long)).toBeUndefined();
    expect(componentExited([labelled(ready, "kube-controller-manager")], "etcd", name, now)).toBe(
      "no etcd pod",
    );
    // A rollout: one ready pod of the component is enough.
    expect(
      componentExited(
        [labelled(exited, "kube-apiserver"), labelled(ready, "kube-apiserver")],
        "kube-apiserver",
        name,
        now,
      ),
    ).toBeUndefined();
  });
});
