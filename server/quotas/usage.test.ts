import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NANO_PER_UNIT, parseQuantity } from "@/server/core/quantity";
import { type QuotaResource, quotaResourceNames, validateHard } from "@/server/core/quota-resources";
import {
  addUsage,
  type ContainerLike,
  checkAgainst,
  compareHardToUsage,
  objectUsage,
  type PodLike,
  persistentVolumeClaimUsage,
  podCounts,
  podLimits,
  podRequests,
  podUsage,
  refusalMessage,
  subtractUsage,
  sumUsage,
  type Usage,
  usageEquals,
} from "./usage";

const q = (text: string) => parseQuantity(text);
const count = (n: number) => BigInt(n) * NANO_PER_UNIT;
const NOW = new Date("2026-03-01T12:00:00Z");
const MI = 2n ** 20n;
const GI = 2n ** 30n;
/** Whole bytes as a quantity text of nano-units, for sums of mixed suffixes. */
const bytes = (count: bigint) => `${count * NANO_PER_UNIT}n`;

type Resources = { cpu?: string; memory?: string };
const c = (
  name: string,
  requests?: Resources,
  limits?: Resources,
  restartPolicy?: string,
): ContainerLike => ({
  name,
  resources: { requests, limits },
  ...(restartPolicy && { restartPolicy }),
});
const sidecar = (name: string, requests?: Resources, limits?: Resources) =>
  c(name, requests, limits, "Always");

interface PodCase {
  name: string;
  pod: PodLike;
  /** requests.cpu, requests.memory, limits.cpu, limits.memory */
  expected: [string, string, string, string];
}

const POD_CASES: PodCase[] = [
  {
    name: "one container",
    pod: { spec: { containers: [c("a", { cpu: "100m", memory: "129M" }, { cpu: "0.1", memory: "1.5Gi" })] } },
    expected: ["100m", "129M", "100m", "1.5Gi"],
  },
  {
    name: "containers add up",
    pod: {
      spec: {
        containers: [
          c("a", { cpu: "250m", memory: "1Gi" }, { cpu: "1", memory: "2Gi" }),
          c("b", { cpu: "0.5", memory: "512Mi" }, { cpu: "1500m", memory: "1Gi" }),
        ],
      },
    },
    expected: ["750m", "1.5Gi", "2500m", "3Gi"],
  },
  {
    name: "no resources at all",
    pod: { spec: { containers: [{ name: "a" }, { name: "b", resources: {} }] } },
    expected: ["0", "0", "0", "0"],
  },
  {
    name: "missing requests are zero (the API server has already defaulted what it defaults)",
    pod: { spec: { containers: [c("a", undefined, { cpu: "1", memory: "1Gi" }), c("b", { cpu: "1" })] } },
    expected: ["1", "0", "1", "1Gi"],
  },
  {
    name: "an init container bigger than the containers sets the peak",
    pod: {
      spec: {
        initContainers: [c("init", { cpu: "2", memory: "2Gi" }, { cpu: "3", memory: "3Gi" })],
        containers: [c("a", { cpu: "100m", memory: "64Mi" }, { cpu: "200m", memory: "128Mi" })],
      },
    },
    expected: ["2", "2Gi", "3", "3Gi"],
  },
  {
    name: "init containers run one at a time: the largest counts, per resource",
    pod: {
      spec: {
        initContainers: [
          c("cpu-heavy", { cpu: "3", memory: "1Mi" }),
          c("memory-heavy", { cpu: "10m", memory: "3Gi" }),
        ],
        containers: [c("a", { cpu: "1", memory: "1Gi" })],
      },
    },
    expected: ["3", "3Gi", "0", "0"],
  },
  {
    name: "a sidecar adds to the containers",
    pod: {
      spec: {
        initContainers: [sidecar("proxy", { cpu: "150m", memory: "50M" }, { cpu: "300m", memory: "100M" })],
        containers: [c("a", { cpu: "200m", memory: "200Mi" }, { cpu: "400m", memory: "400Mi" })],
      },
    },
    expected: ["350m", bytes(200n * MI + 50_000_000n), "700m", bytes(400n * MI + 100_000_000n)],
  },
  {
    name: "an init container after a sidecar runs alongside it",
    pod: {
      spec: {
        initContainers: [
          sidecar("proxy", { cpu: "150m", memory: "50M" }, { cpu: "300m", memory: "100M" }),
          c("migrate", { cpu: "1", memory: "500Mi" }, { cpu: "1", memory: "1Gi" }),
        ],
        containers: [c("a", { cpu: "200m", memory: "200Mi" }, { cpu: "400m", memory: "400Mi" })],
      },
    },
    // requests: max(0.2+0.15, 0.15+1); limits: max(0.4+0.3, 0.3+1)
    expected: ["1150m", bytes(50_000_000n + 500n * MI), "1300m", bytes(GI + 100_000_000n)],
  },
  {
    name: "an init container before a sidecar does not run alongside it",
    pod: {
      spec: {
        initContainers: [
          c("migrate", { cpu: "1" }, { cpu: "1" }),
          sidecar("proxy", { cpu: "150m" }, { cpu: "300m" }),
        ],
        containers: [c("a", { cpu: "200m" }, { cpu: "400m" })],
      },
    },
    expected: ["1", "0", "1", "0"],
  },
  {
    name: "sidecars accumulate across init phases",
    pod: {
      spec: {
        initContainers: [
          sidecar("s1", { cpu: "100m" }),
          c("i1", { cpu: "200m" }),
          sidecar("s2", { cpu: "300m" }),
          c("i2", { cpu: "350m" }),
        ],
        containers: [c("a", { cpu: "10m" })],
      },
    },
    // containers 0.01 + 0.1 + 0.3 = 0.41; phases: 0.1, 0.3, 0.4, 0.75 → 0.75
    expected: ["750m", "0", "0", "0"],
  },
  {
    name: "a restartPolicy other than Always is an ordinary init container",
    pod: {
      spec: {
        initContainers: [c("once", { cpu: "100m" }, undefined, "OnFailure")],
        containers: [c("a", { cpu: "50m" })],
      },
    },
    expected: ["100m", "0", "0", "0"],
  },
  {
    name: "overhead adds to requests, and to limits only where a limit is set",
    pod: {
      spec: {
        overhead: { cpu: "250m", memory: "120Mi" },
        containers: [c("a", { cpu: "1", memory: "1Gi" }, { cpu: "2" })],
      },
    },
    expected: ["1250m", bytes(GI + 120n * MI), "2250m", "0"],
  },
  {
    name: "overhead does not turn a zero limit into a limit",
    pod: {
      spec: { overhead: { cpu: "250m" }, containers: [c("a", { cpu: "1" }, { cpu: "0", memory: "1Gi" })] },
    },
    expected: ["1250m", "0", "0", "1Gi"],
  },
  {
    name: "pod-level resources replace the containers' sum",
    pod: {
      spec: {
        resources: { requests: { cpu: "1.2", memory: "1.2Gi" }, limits: { cpu: "2", memory: "2Gi" } },
        containers: [c("a"), c("b", { cpu: "100m", memory: "100Mi" }, { cpu: "5", memory: "5Gi" })],
      },
    },
    // 1.2Gi is 1288490188.8 bytes: exact in nano-units.
    expected: ["1200m", "1288490188800000000n", "2", "2Gi"],
  },
  {
    name: "pod-level requests alone leave container limits in place; overhead still adds",
    pod: {
      spec: {
        overhead: { cpu: "100m" },
        resources: { requests: { cpu: "1" } },
        containers: [c("a", { cpu: "100m", memory: "1Gi" }, { cpu: "500m", memory: "2Gi" })],
      },
    },
    expected: ["1100m", "1Gi", "600m", "2Gi"],
  },
  {
    name: "pod-level limits apply when only limits are set at pod level",
    pod: {
      spec: {
        resources: { limits: { memory: "4Gi" } },
        containers: [c("a", { cpu: "100m", memory: "1Gi" }, { cpu: "500m", memory: "2Gi" })],
      },
    },
    expected: ["100m", "1Gi", "500m", "4Gi"],
  },
  {
    name: "pod-level resources of other kinds only do not count as pod-level",
    pod: {
      spec: {
        resources: { requests: { "ephemeral-storage": "1Gi" }, limits: { "ephemeral-storage": "2Gi" } },
        containers: [c("a", { cpu: "100m" }, { cpu: "200m" })],
      },
    },
    expected: ["100m", "0", "200m", "0"],
  },
  {
    name: "a container resized in place charges the larger of spec and status",
    pod: {
      spec: { containers: [c("a", { cpu: "500m", memory: "1Gi" }, { cpu: "1", memory: "1Gi" })] },
      status: {
        containerStatuses: [
          {
            name: "a",
            allocatedResources: { cpu: "700m", memory: "512Mi" },
            resources: { requests: { cpu: "600m", memory: "2Gi" }, limits: { cpu: "2", memory: "512Mi" } },
          },
        ],
      },
    },
    expected: ["700m", "2Gi", "2", "1Gi"],
  },
  {
    name: "an infeasible resize charges only what the status reports",
    pod: {
      spec: { containers: [c("a", { cpu: "8", memory: "16Gi" }, { cpu: "8", memory: "16Gi" })] },
      status: {
        conditions: [{ type: "PodResizePending", reason: "Infeasible" }],
        containerStatuses: [
          {
            name: "a",
            allocatedResources: { cpu: "500m" },
            resources: { requests: { cpu: "400m", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } },
          },
        ],
      },
    },
    expected: ["500m", "1Gi", "1", "1Gi"],
  },
  {
    name: "a deferred resize still charges the spec",
    pod: {
      spec: { containers: [c("a", { cpu: "2" }, { cpu: "2" })] },
      status: {
        conditions: [{ type: "PodResizePending", reason: "Deferred" }],
        containerStatuses: [{ name: "a", resources: { requests: { cpu: "1" }, limits: { cpu: "1" } } }],
      },
    },
    expected: ["2", "0", "2", "0"],
  },
  {
    name: "status resources count for sidecars, not for ordinary init containers",
    pod: {
      spec: {
        initContainers: [sidecar("proxy", { cpu: "100m" }), c("init", { cpu: "100m" })],
        containers: [c("a", { cpu: "100m" })],
      },
      status: {
        initContainerStatuses: [
          { name: "proxy", resources: { requests: { cpu: "300m" } } },
          { name: "init", resources: { requests: { cpu: "5" } } },
        ],
      },
    },
    // containers 0.1 + sidecar 0.3 = 0.4; phases 0.3, 0.3 + 0.1 → 0.4
    expected: ["400m", "0", "0", "0"],
  },
  {
    name: "a status without resources leaves the spec alone",
    pod: {
      spec: { containers: [c("a", { cpu: "2" })] },
      status: { containerStatuses: [{ name: "a", allocatedResources: { cpu: "9" } }] },
    },
    expected: ["2", "0", "0", "0"],
  },
];

describe("podUsage (component-helpers' PodRequests/PodLimits as the quota evaluator calls them)", () => {
  it.each(POD_CASES)("$name", ({ pod, expected }) => {
    const [requestsCpu, requestsMemory, limitsCpu, limitsMemory] = expected.map(q);
    expect(podUsage(pod)).toEqual({
      pods: count(1),
      "requests.cpu": requestsCpu,
      "requests.memory": requestsMemory,
      "limits.cpu": limitsCpu,
      "limits.memory": limitsMemory,
    });
  });

  it("keeps every resource name in the raw requests and limits", () => {
    const pod: PodLike = {
      spec: {
        containers: [
          c("a", { cpu: "1" }),
          { name: "b", resources: { requests: { "ephemeral-storage": "1Gi" } } },
        ],
      },
    };
    expect(podRequests(pod)).toEqual(
      new Map([
        ["cpu", count(1)],
        ["ephemeral-storage", q("1Gi")],
      ]),
    );
    expect(podLimits(pod)).toEqual(new Map());
  });

  it("accepts an empty pod", () => {
    expect(podUsage({})).toEqual({
      pods: count(1),
      "requests.cpu": 0n,
      "requests.memory": 0n,
      "limits.cpu": 0n,
      "limits.memory": 0n,
    });
  });
});

describe("podCounts", () => {
  it.each([
    ["Pending", true],
    ["Running", true],
    ["Unknown", true],
    [undefined, true],
    ["Succeeded", false],
    ["Failed", false],
  ])("a %s pod counts: %s", (phase, counts) => {
    expect(podCounts({ status: { phase } }, NOW)).toBe(counts);
  });

  it("a terminating pod counts until its grace period is over", () => {
    const deleting = (
      deletionTimestamp: string | Date,
      deletionGracePeriodSeconds: number | undefined,
    ): PodLike => ({
      metadata: { deletionTimestamp, deletionGracePeriodSeconds },
    });
    expect(podCounts(deleting("2026-03-01T11:59:30Z", 30), NOW)).toBe(true);
    expect(podCounts(deleting("2026-03-01T11:59:29Z", 30), NOW)).toBe(false);
    expect(podCounts(deleting(new Date("2026-03-01T11:59:00Z"), 120), NOW)).toBe(true);
    expect(podCounts(deleting("2026-03-01T12:00:00Z", 0), NOW)).toBe(true);
    expect(podCounts(deleting("2026-03-01T11:59:59Z", 0), NOW)).toBe(false);
    // Without a grace period Kubernetes keeps charging it.
    expect(podCounts(deleting("2020-01-01T00:00:00Z", undefined), NOW)).toBe(true);
  });
});

describe("objectUsage", () => {
  const pod: PodLike = { spec: { containers: [c("a", { cpu: "1" }, { cpu: "1" })] } };

  it("charges a pod that counts, and nothing for one that does not", () => {
    expect(objectUsage("Pod", pod, NOW)).toEqual(podUsage(pod));
    expect(objectUsage("Pod", { ...pod, status: { phase: "Succeeded" } }, NOW)).toEqual({});
  });

  it("needs the time for a pod", () => {
    expect(() => objectUsage("Pod" as "Service", pod)).toThrow(/needs the time/);
  });

  it.each([
    ["Service", "services"],
    ["ConfigMap", "configmaps"],
    ["Secret", "secrets"],
    ["Namespace", "namespaces"],
  ] as const)("a %s charges one %s", (kind, resource) => {
    expect(objectUsage(kind, { spec: { type: "LoadBalancer", ports: [{ port: 1 }, { port: 2 }] } })).toEqual({
      [resource]: count(1),
    });
  });

  it.each([
    ["1.5Gi", undefined, q("1.5Gi")],
    ["129M", undefined, count(129_000_000)],
    ["2500m", undefined, count(3)],
    ["1n", undefined, count(1)],
    ["1Gi", "2Gi", q("2Gi")],
    ["2Gi", "1Gi", q("2Gi")],
    ["1", "1.5", count(2)],
    ["1.5", "1.2", count(2)],
  ])("a claim for %s (allocated %s) charges %s nano of storage", (requested, allocated, storage) => {
    const claim = {
      spec: { resources: { requests: { storage: requested } } },
      status: allocated ? { allocatedResources: { storage: allocated } } : {},
    };
    expect(objectUsage("PersistentVolumeClaim", claim)).toEqual({
      persistentvolumeclaims: count(1),
      "requests.storage": storage,
    });
  });

  it("a claim without a storage request charges only the claim, whatever is allocated", () => {
    expect(
      persistentVolumeClaimUsage({ spec: {}, status: { allocatedResources: { storage: "1Gi" } } }),
    ).toEqual({
      persistentvolumeclaims: count(1),
    });
  });
});

const usage = (entries: Partial<Record<QuotaResource, string>>): Usage =>
  Object.fromEntries(Object.entries(entries).map(([resource, text]) => [resource, q(text as string)]));

describe("arithmetic", () => {
  it("adds, subtracts and sums per resource with missing as zero", () => {
    const a = usage({ "requests.cpu": "500m", pods: "1" });
    const b = usage({ "requests.cpu": "1.5", services: "2" });
    expect(addUsage(a, b)).toEqual(usage({ "requests.cpu": "2", pods: "1", services: "2" }));
    expect(subtractUsage(a, b)).toEqual({ "requests.cpu": -q("1"), pods: count(1), services: -count(2) });
    expect(sumUsage([a, b, a])).toEqual(usage({ "requests.cpu": "2500m", pods: "2", services: "2" }));
    expect(sumUsage([])).toEqual({});
    expect(usageEquals({ pods: 0n }, {})).toBe(true);
    expect(usageEquals({ pods: 1n }, {})).toBe(false);
  });

  const usages = fc.dictionary(
    fc.constantFrom(...quotaResourceNames),
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
  ) as fc.Arbitrary<Usage>;

  it("addition is associative and commutative, and subtraction undoes it", () => {
    fc.assert(
      fc.property(usages, usages, usages, (a, b, d) => {
        expect(usageEquals(addUsage(addUsage(a, b), d), addUsage(a, addUsage(b, d)))).toBe(true);
        expect(usageEquals(addUsage(a, b), addUsage(b, a))).toBe(true);
        expect(usageEquals(subtractUsage(addUsage(a, b), b), a)).toBe(true);
        expect(usageEquals(sumUsage([a, b, d]), addUsage(a, addUsage(b, d)))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("a pod's usage summed in any order is the same", () => {
    const pods = POD_CASES.map((entry) => podUsage(entry.pod));
    fc.assert(
      fc.property(fc.shuffledSubarray(pods, { minLength: pods.length }), (shuffled) => {
        expect(usageEquals(sumUsage(shuffled), sumUsage(pods))).toBe(true);
      }),
    );
  });
});

function hardOf(text: Record<string, string>) {
  const result = validateHard(text);
  if (!result.ok) throw new Error(result.errors.map((error) => error.message).join("; "));
  return result.hard;
}

describe("checkAgainst and refusalMessage", () => {
  const hard = hardOf({ "requests.cpu": "2", "limits.memory": "4Gi", pods: "10" });

  it("passes what fits, exactly up to the limit", () => {
    expect(checkAgainst(hard, usage({ "requests.cpu": "1500m" }), usage({ "requests.cpu": "500m" }))).toEqual(
      [],
    );
  });

  it("names every resource the request would take over its limit", () => {
    const used = usage({ "requests.cpu": "1800m", "limits.memory": "3.5Gi", pods: "4" });
    const delta = usage({ "requests.cpu": "500m", "limits.memory": "1Gi", pods: "1" });
    const exceeded = checkAgainst(hard, used, delta);
    expect(exceeded).toEqual([
      { resource: "requests.cpu", requested: q("500m"), used: q("1800m"), limit: q("2") },
      { resource: "limits.memory", requested: q("1Gi"), used: q("3.5Gi"), limit: q("4Gi") },
    ]);
    expect(refusalMessage("acme", exceeded)).toBe(
      'exceeded tenant quota of "acme": requests.cpu: requested 500m, used 1800m, limited 2; ' +
        "limits.memory: requested 1Gi, used 3584Mi, limited 4Gi",
    );
  });

  it("ignores resources without a limit and requests that do not grow a resource", () => {
    const over = usage({ "requests.cpu": "3", "requests.memory": "100Gi" });
    expect(checkAgainst(hard, over, usage({ "requests.cpu": "0", "requests.memory": "1Gi" }))).toEqual([]);
    expect(checkAgainst(hard, over, { "requests.cpu": -q("1") })).toEqual([]);
    expect(checkAgainst(hard, over, usage({ "requests.cpu": "1m" }))).toHaveLength(1);
  });

  it("a zero limit refuses any amount", () => {
    const none = hardOf({ pods: "0" });
    expect(refusalMessage("globex", checkAgainst(none, {}, usage({ pods: "1" })))).toBe(
      'exceeded tenant quota of "globex": pods: requested 1, used 0, limited 0',
    );
  });

  it("never passes what would end above the limit (property)", () => {
    const amounts = fc.bigInt({ min: 0n, max: 10n ** 20n });
    fc.assert(
      fc.property(amounts, amounts, amounts, (limit, used, requested) => {
        const exceeded = checkAgainst(
          { "requests.cpu": limit },
          { "requests.cpu": used },
          { "requests.cpu": requested },
        );
        expect(exceeded.length === 1).toBe(requested > 0n && used + requested > limit);
      }),
    );
  });
});

describe("compareHardToUsage", () => {
  it("lists what a lower quota would leave over, in display order", () => {
    const hard = hardOf({ pods: "3", "requests.cpu": "1", secrets: "10" });
    const used = usage({ "requests.cpu": "1500m", pods: "3", secrets: "12", services: "100" });
    expect(compareHardToUsage(hard, used)).toEqual([
      { resource: "requests.cpu", used: q("1500m"), limit: q("1"), over: q("500m") },
      { resource: "secrets", used: count(12), limit: count(10), over: count(2) },
    ]);
    expect(compareHardToUsage(hard, {})).toEqual([]);
  });
});
