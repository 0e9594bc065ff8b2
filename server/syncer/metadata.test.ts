import { describe, expect, it } from "vitest";
import {
  allowListEntryProblem,
  allowListed,
  isReservedKey,
  isRing0OwnedKey,
  podAnnotationsBelow,
  withoutRing0OwnedKeys,
} from "./metadata";

describe("which tenant labels and annotations reach the super cluster", () => {
  it("knows Ring0's and kwok's keys, subdomains included, and nothing that only looks like them", () => {
    for (const key of [
      "ring0.dev/tenant",
      "RING0.DEV/tenant",
      "sync.ring0.dev/x",
      "kwok.x-k8s.io/node",
      "pod-complete.stage.kwok.x-k8s.io/delay",
    ]) {
      expect(isRing0OwnedKey(key), key).toBe(true);
    }
    for (const key of ["ring0", "ring0.dev", "ring0.dev.example.com/x", "notring0.dev/x", "app"]) {
      expect(isRing0OwnedKey(key), key).toBe(false);
    }
  });

  it("reserves Kubernetes' domains from operator allow-lists as well", () => {
    expect(isReservedKey("pod-security.kubernetes.io/enforce")).toBe(true);
    expect(isReservedKey("scheduler.alpha.kubernetes.io/node-selector")).toBe(true);
    expect(isReservedKey("k8s.io/x")).toBe(true);
    expect(isReservedKey("example.com/team")).toBe(false);
  });

  it("keeps the tenant's other string entries and drops malformed ones", () => {
    expect(withoutRing0OwnedKeys({ app: "web", "ring0.dev/tenant": "x", bad: 5 })).toEqual({ app: "web" });
    expect(withoutRing0OwnedKeys(undefined)).toEqual({});
    expect(withoutRing0OwnedKeys(["app"])).toEqual({});
  });

  it("passes only allow-listed keys: exact, or every key of a domain", () => {
    const labels = { team: "a", "example.com/owner": "b", "sub.example.com/x": "c", other: "d" };
    expect(allowListed(labels, ["team", "example.com/*"])).toEqual({ team: "a", "example.com/owner": "b" });
    expect(allowListed(labels, [])).toEqual({});
    expect(allowListed({ "ring0.dev/tenant": "x" }, ["ring0.dev/*"])).toEqual({});
  });

  it("passes a pod's unprefixed annotations, and its prefixed ones only when allow-listed", () => {
    const annotations = {
      mysubpath: "mypath",
      "example.com/owner": "b",
      "k8s.v1.cni.cncf.io/networks": "kube-system/host",
      "kwok.x-k8s.io/node": "fake",
      "container.apparmor.security.beta.kubernetes.io/web": "unconfined",
    };
    expect(podAnnotationsBelow(annotations, [])).toEqual({ mysubpath: "mypath" });
    expect(podAnnotationsBelow(annotations, ["example.com/*"])).toEqual({
      mysubpath: "mypath",
      "example.com/owner": "b",
    });
  });

  it("says why an allow-list entry cannot be one", () => {
    expect(allowListEntryProblem("team")).toBeNull();
    expect(allowListEntryProblem("example.com/*")).toBeNull();
    expect(allowListEntryProblem("*")).toMatch(/neither a label or annotation key/);
    expect(allowListEntryProblem("pod-security.kubernetes.io/*")).toMatch(/can never pass/);
  });
});
