import { describe, expect, it } from "vitest";
import { byNamespacedName, summariseContainers, summarisePod, type V1Pod } from "./pod";

const pod = (overrides: Partial<V1Pod> = {}): V1Pod => ({
  metadata: { namespace: "team-a", name: "web-1", creationTimestamp: new Date("2026-11-25T10:00:00Z") },
  spec: {
    nodeName: "node-1",
    containers: [
      { name: "app", image: "toolbox" },
      { name: "sidecar", image: "proxy" },
    ],
  },
  status: {
    phase: "Running",
    containerStatuses: [
      {
        name: "app",
        image: "toolbox:1",
        imageID: "",
        ready: true,
        restartCount: 2,
        state: { running: { startedAt: new Date("2026-11-25T10:00:05Z") } },
      },
      {
        name: "sidecar",
        image: "proxy",
        imageID: "",
        ready: false,
        restartCount: 1,
        state: { terminated: { exitCode: 137, reason: "OOMKilled" } },
      },
    ],
  },
  ...overrides,
});

describe("pod summaries", () => {
  it("counts ready containers and restarts, and says where and since when", () => {
    expect(summarisePod(pod())).toEqual({
      namespace: "team-a",
      name: "web-1",
      phase: "Running",
      node: "node-1",
      ready: "1/2",
      restarts: 3,
      createdAt: "2026-11-25T10:00:00.000Z",
    });
  });

  it("shows a pod being deleted as Terminating and an unscheduled one on no node", () => {
    const deleting = pod({
      metadata: { name: "x", namespace: "a", deletionTimestamp: new Date() },
      spec: { containers: [] },
      status: { phase: "Running" },
    });
    expect(summarisePod(deleting)).toMatchObject({ phase: "Terminating", node: null, ready: "0/0" });
  });

  it("describes each container's state in spec order", () => {
    expect(summariseContainers(pod())).toEqual([
      {
        name: "app",
        image: "toolbox:1",
        ready: true,
        restarts: 2,
        state: "running",
        detail: "since 2026-11-25T10:00:05.000Z",
      },
      {
        name: "sidecar",
        image: "proxy",
        ready: false,
        restarts: 1,
        state: "terminated",
        detail: "OOMKilled · exit code 137",
      },
    ]);
  });

  it("orders rows by namespace/name", () => {
    const rows = [summarisePod(pod()), { ...summarisePod(pod()), namespace: "a" }].sort(byNamespacedName);
    expect(rows.map((row) => row.namespace)).toEqual(["a", "team-a"]);
  });
});
