import { describe, expect, it } from "vitest";
import type { V1Pod } from "@/server/k8s/kinds/node";
import { byNamespaceAndName, superPodDetail, superPodRow } from "./super-pods";

const synced: V1Pod = {
  metadata: {
    namespace: "r0-acme-default",
    name: "web",
    labels: { "ring0.dev/tenant": "acme" },
    creationTimestamp: new Date("2025-01-02T03:04:05Z"),
  },
  spec: { nodeName: "kwok-1", containers: [{ name: "web", image: "nginx" }, { name: "side" }] },
  status: {
    phase: "Running",
    podIP: "127.0.0.7",
    containerStatuses: [
      {
        name: "web",
        image: "docker.io/library/nginx:latest",
        imageID: "",
        ready: true,
        restartCount: 2,
        state: { running: {} },
      },
      {
        name: "side",
        image: "busybox",
        imageID: "",
        ready: false,
        restartCount: 1,
        state: { terminated: { exitCode: 1, reason: "Error" } },
      },
    ],
  },
};

describe("superPodRow", () => {
  it("summarises a synced pod with its tenant from the syncer's label", () => {
    expect(superPodRow(synced)).toEqual({
      namespace: "r0-acme-default",
      name: "web",
      phase: "Running",
      node: "kwok-1",
      tenant: "acme",
      ready: "1/2",
      restarts: 3,
      createdAt: "2025-01-02T03:04:05.000Z",
    });
  });

  it("has no tenant for the super cluster's own pods, and says Terminating and unscheduled", () => {
    const row = superPodRow({
      metadata: { namespace: "kube-system", name: "dns", deletionTimestamp: new Date() },
      spec: { containers: [{ name: "dns" }] },
      status: { phase: "Running" },
    });
    expect(row).toMatchObject({ tenant: null, node: null, phase: "Terminating", ready: "0/1", restarts: 0 });
  });
});

describe("superPodDetail", () => {
  it("lists the containers with their state for the Logs and Shell tabs", () => {
    const detail = superPodDetail(synced);
    expect(detail.podIP).toBe("127.0.0.7");
    expect(detail.hostIP).toBeNull();
    expect(detail.containers).toEqual([
      { name: "web", image: "docker.io/library/nginx:latest", ready: true, restarts: 2, state: "running" },
      { name: "side", image: "busybox", ready: false, restarts: 1, state: "terminated (Error, exit code 1)" },
    ]);
  });
});

describe("byNamespaceAndName", () => {
  it("sorts by namespace, then name", () => {
    const rows = [
      { namespace: "b", name: "a" },
      { namespace: "a", name: "z" },
      { namespace: "a", name: "b" },
    ].map((row) => superPodRow({ metadata: row }));
    expect(rows.sort(byNamespaceAndName).map((row) => `${row.namespace}/${row.name}`)).toEqual([
      "a/b",
      "a/z",
      "b/a",
    ]);
  });
});
