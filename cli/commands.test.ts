import { describe, expect, it } from "vitest";
import { parseLimits, renderQuota } from "./commands";
import { UsageError } from "./errors";

describe("parseLimits", () => {
  it("reads resource=quantity words as they are, leaving the judging to the server", () => {
    expect(parseLimits(["requests.cpu=2", "pods=-1", "requests.memory=12Xi", "gpus=1.5.3"])).toEqual({
      "requests.cpu": "2",
      pods: "-1",
      "requests.memory": "12Xi",
      gpus: "1.5.3",
    });
  });

  it("refuses words that are not resource=quantity, and repeats", () => {
    expect(() => parseLimits(["pods"])).toThrow(UsageError);
    expect(() => parseLimits(["=3"])).toThrow(/expected resource=quantity/);
    expect(() => parseLimits(["pods=1", "pods=2"])).toThrow(/pods: given twice/);
  });
});

describe("renderQuota", () => {
  it("shows the template and each limit with its usage, marking what is over", () => {
    expect(
      renderQuota({
        tenant: "acme",
        template: "small",
        hard: { "requests.cpu": "2", pods: "20" },
        used: { "requests.cpu": "2500m" },
        over: [{ resource: "requests.cpu", used: "2500m", limit: "2" }],
      }),
    ).toBe(
      [
        "Tenant:    acme",
        "Template:  small",
        "",
        "RESOURCE       USED    LIMIT   STATUS",
        "requests.cpu   2500m   2       over",
        "pods           0       20      ok",
        "",
      ].join("\n"),
    );
  });

  it("says when there is no quota, or usage is unknown", () => {
    expect(renderQuota({ tenant: "acme", template: null, hard: {}, used: null, over: [] })).toBe(
      "Tenant acme has no quota.\n",
    );
    expect(
      renderQuota({ tenant: "acme", template: null, hard: { pods: "1" }, used: null, over: [] }),
    ).toMatch(/\npods +- +1 +-\nUsage unknown/);
  });
});
