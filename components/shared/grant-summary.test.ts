import { describe, expect, it } from "vitest";
import type { SharedGrantView } from "@/server/sharing/grantee-view";
import { accessText, expiryText, ruleText, sharesByOwner } from "./grant-summary";

const access = (namespace: string, canListPods: boolean) => ({
  namespace,
  canListPods,
  canReadLogs: true,
  canExec: false,
  logsLimitedTo: null,
  execLimitedTo: null,
});

function grant(owner: string, name: string, namespaces: SharedGrantView["namespaces"]): SharedGrantView {
  return {
    owner,
    ownerDisplayName: owner.toUpperCase(),
    name: `${owner}-${name}`,
    shortName: name,
    purpose: "p",
    expiresAt: null,
    rules: [],
    namespaces,
  };
}

describe("grant summary", () => {
  it("words expiry the same everywhere", () => {
    expect(expiryText("2026-11-22T17:05:09.000Z")).toBe("Expires 2026-11-22 17:05 UTC");
    expect(expiryText(null)).toBe("Does not expire");
  });

  it("says what the portal can do, naming pods a grant limits to", () => {
    expect(accessText(access("shared", true))).toBe("see its pods, read logs");
    expect(
      accessText({ ...access("ops", false), canReadLogs: false, canExec: true, execLimitedTo: ["debug"] }),
    ).toBe("open a shell (pods debug)");
    expect(accessText({ ...access("ops", false), canReadLogs: false })).toBe("use kubectl only");
  });

  it("writes a rule as a sentence", () => {
    expect(
      ruleText({
        namespaces: ["shared"],
        apiGroups: [""],
        resources: ["pods", "pods/log"],
        resourceNames: [],
        verbs: ["get", "list"],
      }),
    ).toBe("get, list on pods, pods/log in shared");
    expect(
      ruleText({
        namespaces: ["a"],
        apiGroups: ["apps"],
        resources: ["deployments"],
        resourceNames: ["web"],
        verbs: ["get"],
      }),
    ).toBe("get on deployments (apps) named web in a");
  });

  it("groups grants by owner, with the namespaces whose pods can be listed", () => {
    const shares = sharesByOwner([
      grant("acme", "a", [access("shared", true), access("logs-only", false)]),
      grant("acme", "b", [access("ops", true), access("shared", true)]),
      grant("hooli", "c", [access("x", false)]),
    ]);
    expect(shares.map((share) => [share.owner, share.grants.length, share.workloadNamespaces])).toEqual([
      ["acme", 2, ["ops", "shared"]],
      ["hooli", 1, []],
    ]);
  });
});
