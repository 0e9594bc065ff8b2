import { describe, expect, it } from "vitest";
import { parseLimits, renderDefaultShare, renderQuota, runCommand } from "./commands";
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

describe("renderDefaultShare", () => {
  it("shows each limit a new namespace gets, and who set it", () => {
    expect(
      renderDefaultShare({
        tenant: "acme",
        hard: { "requests.cpu": "500m", pods: "5" },
        updatedBy: "Ada",
        updatedAt: "2026-11-21T12:00:00.000Z",
      }),
    ).toBe(
      [
        "Tenant:      acme",
        "Updated by:  Ada at 2026-11-21T12:00:00.000Z",
        "",
        "Each new namespace without a ResourceQuota gets a default-share ResourceQuota with:",
        "RESOURCE       LIMIT",
        "requests.cpu   500m",
        "pods           5",
        "",
      ].join("\n"),
    );
  });

  it("says when there is none", () => {
    expect(renderDefaultShare({ tenant: "acme", hard: null, updatedBy: null, updatedAt: null })).toBe(
      "Tenant acme has no default share: a new namespace is bounded by the tenant quota alone.\n",
    );
  });
});

describe("quota default-share", () => {
  it("refuses --clear together with limits before calling Ring0", async () => {
    const io = {
      env: { RING0_URL: "http://ring0.test", RING0_TOKEN: `r0_${"a".repeat(43)}`, HOME: "/nonexistent" },
      readStdin: async () => null,
      fetch: (() => {
        throw new Error("no call expected");
      }) as unknown as typeof fetch,
    };
    await expect(
      runCommand(
        {
          command: "quota default-share",
          args: { tenant: "acme" },
          options: { clear: true },
          rest: ["pods=1"],
          global: { output: "table" },
        },
        io,
      ),
    ).rejects.toThrow(/--clear: give either --clear or resource=quantity limits, not both/);
  });
});
