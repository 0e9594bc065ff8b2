import { describe, expect, it } from "vitest";
import type { GrantRule, SharingPolicyResource } from "@/server/sharing/types";
import { canExecInPod, coversNamespace, grantShortName, namespaceAccess } from "./grantee-view";

function grant(name: string, rules: GrantRule[], owner = "acme"): SharingPolicyResource {
  return {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "SharingPolicy",
    metadata: { name },
    spec: { ownerTenant: owner, grantees: [{ tenant: "globex" }], rules, purpose: "test" },
  };
}

const rule = (resources: string[], verbs: string[], resourceNames?: string[]): GrantRule => ({
  namespaces: ["shared"],
  apiGroups: [""],
  resources,
  verbs,
  ...(resourceNames ? { resourceNames } : {}),
});

describe("namespaceAccess", () => {
  it("needs list and watch of pods for the Workloads view", () => {
    expect(namespaceAccess([grant("a", [rule(["pods"], ["list"])])], "shared").canListPods).toBe(false);
    expect(namespaceAccess([grant("a", [rule(["pods"], ["list", "watch"])])], "shared").canListPods).toBe(
      true,
    );
  });

  it("reads logs from get pods/log and a shell from create pods/exec, nothing from other namespaces", () => {
    const grants = [grant("a", [rule(["pods/log"], ["get"]), rule(["pods/exec"], ["create"])])];
    expect(namespaceAccess(grants, "shared")).toEqual({
      namespace: "shared",
      canListPods: false,
      canReadLogs: true,
      canExec: true,
      logsLimitedTo: null,
      execLimitedTo: null,
    });
    expect(namespaceAccess(grants, "default")).toMatchObject({ canReadLogs: false, canExec: false });
  });

  it("names the pods resource names limit logs and exec to", () => {
    const grants = [
      grant("a", [rule(["pods/exec"], ["create"], ["debug", "api"]), rule(["pods/log"], ["get"])]),
    ];
    expect(namespaceAccess(grants, "shared")).toMatchObject({
      logsLimitedTo: null,
      execLimitedTo: ["api", "debug"],
    });
    expect(canExecInPod(grants, "shared", "debug")).toBe(true);
    expect(canExecInPod(grants, "shared", "web")).toBe(false);
    expect(canExecInPod(grants, "other", "debug")).toBe(false);
  });

  it("does not take create pods for exec, nor a wildcard-less resource for another", () => {
    const grants = [grant("a", [rule(["pods"], ["create", "get"])])];
    expect(namespaceAccess(grants, "shared")).toMatchObject({ canReadLogs: false, canExec: false });
    expect(coversNamespace(grants, "shared")).toBe(true);
    expect(coversNamespace(grants, "default")).toBe(false);
  });
});

describe("grantShortName", () => {
  it("strips the owner's prefix only", () => {
    expect(grantShortName(grant("acme-oncall", []))).toBe("oncall");
    expect(grantShortName(grant("acme.oncall", []))).toBe("oncall");
    expect(grantShortName(grant("oncall", []))).toBe("oncall");
    expect(grantShortName(grant("acme-", []))).toBe("acme-");
  });
});
