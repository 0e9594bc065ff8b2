import { describe, expect, it } from "vitest";
import { parseQuantity } from "@/server/core/quantity";
import { allocationVsCapacity, topConsumers } from "./overview";
import { breakdown } from "./usage-view";

const q = (text: string) => parseQuantity(text);

describe("allocationVsCapacity", () => {
  const capacity = { cpu: q("8"), memory: q("32Gi"), pods: q("220") };

  it("sums the tenants' limits per resource and divides by what the nodes allocate", () => {
    const rows = allocationVsCapacity(
      [
        { "requests.cpu": q("6"), "limits.cpu": q("12"), "requests.memory": q("16Gi") },
        { "requests.cpu": q("6"), pods: q("100") },
        {},
      ],
      capacity,
    );
    const byResource = Object.fromEntries(rows.map((row) => [row.resource, row]));
    expect(byResource["requests.cpu"]).toMatchObject({
      allocated: "12",
      capacity: "8",
      overcommit: 1.5,
      tenantsLimited: 2,
      tenantsUnlimited: 1,
    });
    expect(byResource["limits.cpu"]).toMatchObject({ allocated: "12", overcommit: 1.5, tenantsLimited: 1 });
    expect(byResource["requests.memory"]).toMatchObject({
      allocated: "16Gi",
      capacity: "32Gi",
      overcommit: 0.5,
    });
    expect(byResource["limits.memory"]).toMatchObject({ allocated: "0", overcommit: 0, tenantsUnlimited: 3 });
    expect(byResource.pods).toMatchObject({ allocated: "100", capacity: "220", overcommit: 0.454 });
  });

  it("has no ratio without capacity", () => {
    const rows = allocationVsCapacity([{ "requests.cpu": q("1") }], { cpu: 0n, memory: 0n, pods: 0n });
    expect(rows[0]!.overcommit).toBeNull();
  });
});

describe("topConsumers", () => {
  it("ranks by use, breaks ties by name, leaves out tenants using nothing", () => {
    const top = topConsumers(
      [
        { tenant: "globex", used: { "requests.cpu": q("1") } },
        { tenant: "acme", used: { "requests.cpu": q("2") } },
        { tenant: "initech", used: { "requests.cpu": q("1") } },
        { tenant: "idle", used: {} },
      ],
      "requests.cpu",
      q("8"),
      5,
    );
    expect(top).toEqual([
      { tenant: "acme", used: "2", usedValue: 2, ofCapacity: 25 },
      { tenant: "globex", used: "1", usedValue: 1, ofCapacity: 12.5 },
      { tenant: "initech", used: "1", usedValue: 1, ofCapacity: 12.5 },
    ]);
  });
});

describe("breakdown", () => {
  const usage = {
    at: new Date(0),
    total: {},
    namespaces: [
      { namespace: "team-b", used: { "requests.cpu": q("1200m") }, shares: { "requests.cpu": q("1") } },
      { namespace: "team-a", used: { "requests.cpu": q("500m") }, shares: {} },
    ],
    workloads: [
      {
        namespace: "team-a",
        kind: "ReplicaSet",
        name: "small",
        pods: 1,
        used: { "requests.cpu": q("100m") },
      },
      {
        namespace: "team-b",
        kind: "StatefulSet",
        name: "db",
        pods: 3,
        used: { "requests.cpu": q("1200m"), "requests.memory": q("3Gi") },
      },
      { namespace: "team-a", kind: "Pod", name: "big-mem", pods: 1, used: { "requests.memory": q("8Gi") } },
    ],
  };

  it("lists namespaces by name with their share and whether they are over it", () => {
    const result = breakdown(usage, ["requests.cpu"], { workloadsBy: "cpu", topWorkloads: 10 });
    expect(result.namespaces).toEqual([
      { namespace: "team-a", cells: { "requests.cpu": { used: "500m", share: null, over: false } } },
      { namespace: "team-b", cells: { "requests.cpu": { used: "1200m", share: "1", over: true } } },
    ]);
  });

  it("keeps the top workloads by the chosen resource", () => {
    const byCpu = breakdown(usage, [], { workloadsBy: "cpu", topWorkloads: 2 });
    expect(byCpu.workloads.map((workload) => workload.name)).toEqual(["db", "small"]);
    expect(byCpu.workloadCount).toBe(3);
    expect(byCpu.workloads[0]).toMatchObject({
      pods: 3,
      requestsCpu: "1200m",
      requestsMemory: "3Gi",
      cpuValue: 1.2,
    });
    const byMemory = breakdown(usage, [], { workloadsBy: "memory", topWorkloads: 1 });
    expect(byMemory.workloads.map((workload) => workload.name)).toEqual(["big-mem"]);
  });
});
