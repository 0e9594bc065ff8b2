import { describe, expect, it } from "vitest";
import { componentDown, isPodReady, type Pod, podFailure, podWaitingFor } from "./status";

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

  it("finds a component down when none of its pods is ready, naming why", () => {
    const name = "app.kubernetes.io/name";
    const labelled = (pod: Pod, component: string): Pod => ({
      ...pod,
      metadata: { ...pod.metadata, labels: { [name]: component } },
    });
    const exited: Pod = {
      metadata: { name: "kube-apiserver-xyz" },
      status: {
        phase: "Running",
        conditions: [{ type: "Ready", status: "False" }],
        containerStatuses: [
          { name: "kube-apiserver", state: { terminated: { reason: "Error", exitCode: 137 } } },
        ],
      },
    };
    const pods = [labelled(exited, "kube-apiserver"), labelled(ready, "kube-controller-manager")];
    expect(componentDown(pods, "kube-apiserver", name)).toBe("kube-apiserver-xyz: Running, not ready");
    expect(componentDown(pods, "kube-controller-manager", name)).toBeUndefined();
    expect(componentDown(pods, "etcd", name)).toBe("no etcd pod");
    // A rollout: one ready pod of the component is enough.
    expect(
      componentDown([...pods, labelled(ready, "kube-apiserver")], "kube-apiserver", name),
    ).toBeUndefined();
  });
});
