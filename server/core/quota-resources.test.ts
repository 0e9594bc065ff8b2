import { describe, expect, it } from "vitest";
import { NANO_PER_UNIT } from "./quantity";
import {
  canonicalResourceName,
  formatHard,
  formatResourceQuantity,
  isQuotaResource,
  QUOTA_RESOURCE_ALIASES,
  QUOTA_RESOURCES,
  quotaResourceInfo,
  quotaResourceNames,
  validateHard,
} from "./quota-resources";

const G = NANO_PER_UNIT;

describe("the quota resources", () => {
  it("are the eleven of the issue, each with a kind and a label", () => {
    expect(quotaResourceNames).toEqual([
      "requests.cpu",
      "requests.memory",
      "limits.cpu",
      "limits.memory",
      "requests.storage",
      "pods",
      "services",
      "persistentvolumeclaims",
      "configmaps",
      "secrets",
      "namespaces",
    ]);
    for (const resource of QUOTA_RESOURCES) expect(resource.label).not.toBe("");
    expect(quotaResourceInfo("limits.cpu").kind).toBe("cpu");
    expect(quotaResourceInfo("requests.storage").kind).toBe("memory");
    expect(quotaResourceInfo("secrets").kind).toBe("count");
  });

  it("resolve Kubernetes' aliases, and only to supported resources", () => {
    expect(canonicalResourceName("cpu")).toBe("requests.cpu");
    expect(canonicalResourceName("memory")).toBe("requests.memory");
    expect(canonicalResourceName("storage")).toBe("requests.storage");
    expect(canonicalResourceName("count/configmaps")).toBe("configmaps");
    expect(canonicalResourceName("pods")).toBe("pods");
    expect(canonicalResourceName("count/pods")).toBeUndefined();
    expect(canonicalResourceName("gpu")).toBeUndefined();
    expect(canonicalResourceName("toString")).toBeUndefined();
    for (const target of Object.values(QUOTA_RESOURCE_ALIASES)) expect(isQuotaResource(target)).toBe(true);
  });
});

describe("validateHard", () => {
  it("turns every resource into nano-units", () => {
    const result = validateHard({
      "requests.cpu": "2",
      "limits.cpu": "2500m",
      "requests.memory": "1.5Gi",
      "limits.memory": "129M",
      "requests.storage": "1e3",
      pods: "10",
      services: "0",
      persistentvolumeclaims: "1k",
      configmaps: "20",
      secrets: "20",
      namespaces: "5",
    });
    expect(result).toEqual({
      ok: true,
      hard: {
        "requests.cpu": 2n * G,
        "limits.cpu": 2_500_000_000n,
        "requests.memory": 3n * 2n ** 29n * G,
        "limits.memory": 129_000_000n * G,
        "requests.storage": 1000n * G,
        pods: 10n * G,
        services: 0n,
        persistentvolumeclaims: 1000n * G,
        configmaps: 20n * G,
        secrets: 20n * G,
        namespaces: 5n * G,
      },
    });
  });

  it("accepts any subset, including none", () => {
    expect(validateHard({})).toEqual({ ok: true, hard: {} });
    expect(validateHard({ pods: "3" })).toEqual({ ok: true, hard: { pods: 3n * G } });
  });

  it("files aliases under the resource they stand for", () => {
    expect(validateHard({ cpu: "1", memory: "1Gi", storage: "10Gi", "count/secrets": "4" })).toEqual({
      ok: true,
      hard: {
        "requests.cpu": G,
        "requests.memory": 2n ** 30n * G,
        "requests.storage": 10n * 2n ** 30n * G,
        secrets: 4n * G,
      },
    });
  });

  it.each([
    [
      { gpu: "1" },
      "unknown resource 'gpu': Ring0 quotas support requests.cpu, requests.memory, limits.cpu, limits.memory, requests.storage, pods, services, persistentvolumeclaims, configmaps, secrets, namespaces (and the aliases cpu, memory, storage, count/services, count/persistentvolumeclaims, count/configmaps, count/secrets)",
    ],
    [{ "count/pods": "1" }, /^unknown resource 'count\/pods': it counts finished pods too; use 'pods'/],
    [{ "ephemeral-storage": "1Gi" }, /^unknown resource 'ephemeral-storage': Ring0 quotas support/],
    [
      { "requests.cpu": "1.5.3" },
      /^requests\.cpu: '1\.5\.3' is not a quantity \(.*decimal point\): use e\.g\. 500m or 2$/,
    ],
    [
      { "requests.memory": "12Xi" },
      /^requests\.memory: '12Xi' is not a quantity \(.*\): use e\.g\. 512Mi or 4Gi$/,
    ],
    [{ "limits.cpu": "-1" }, "limits.cpu: '-1' is negative: a limit is 0 or more, e.g. 500m or 2"],
    [{ pods: "1.5" }, "pods: '1.5' is not a whole number: use e.g. 10"],
    [{ secrets: "100m" }, "secrets: '100m' is not a whole number: use e.g. 10"],
    [{ pods: 10 }, 'pods: the limit must be a text such as "10"'],
    [{ "requests.cpu": "" }, /^requests\.cpu: '' is not a quantity \(it is empty\)/],
    [{ "requests.cpu": " 1" }, /whitespace/],
    [{ constructor: "1" }, /^unknown resource 'constructor'/],
    [JSON.parse('{"__proto__": "1"}') as Record<string, string>, /^unknown resource '__proto__'/],
  ])("refuses %j", (input, message) => {
    const result = validateHard(input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]!.message).toMatch(message);
    expect(result.errors[0]!.key).toBe(Object.keys(input)[0]);
    expect(result.errors[0]!.value).toBe(Object.values(input)[0]);
  });

  it("refuses a resource given twice through an alias", () => {
    const result = validateHard({ "requests.cpu": "1", cpu: "2" });
    expect(result).toEqual({
      ok: false,
      errors: [
        {
          key: "cpu",
          value: "2",
          message: "cpu: requests.cpu is already given as 'requests.cpu'; give it once",
        },
      ],
    });
    const other = validateHard({ "count/configmaps": "1", configmaps: "2" });
    expect(other.ok || other.errors[0]!.message).toBe(
      "configmaps: configmaps is already given as 'count/configmaps'; give it once",
    );
  });

  it("applies nothing when anything is wrong, and reports every error", () => {
    const result = validateHard({ "requests.cpu": "2", gpu: "1", pods: "-1", "limits.memory": "1GB" });
    expect(result.ok).toBe(false);
    expect("hard" in result).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => error.key)).toEqual(["gpu", "pods", "limits.memory"]);
  });
});

describe("formatting", () => {
  it("renders a resource by its kind", () => {
    expect(formatResourceQuantity("requests.cpu", 1_500_000_000n)).toBe("1500m");
    expect(formatResourceQuantity("limits.memory", 3n * 2n ** 29n * G)).toBe("1536Mi");
    expect(formatResourceQuantity("pods", 7n * G)).toBe("7");
  });

  it("formatHard is validateHard's inverse, in display order", () => {
    const text = { pods: "10", "requests.memory": "1536Mi", "requests.cpu": "2500m", namespaces: "3" };
    const result = validateHard(text);
    if (!result.ok) throw new Error("valid input refused");
    const formatted = formatHard(result.hard);
    expect(formatted).toEqual(text);
    expect(Object.keys(formatted)).toEqual(["requests.cpu", "requests.memory", "pods", "namespaces"]);
  });
});
