import { describe, expect, it } from "vitest";
import { auditedVerb, auditResult, isLongRunning } from "./requests";

describe("auditedVerb", () => {
  it("names mutations and upgrades, not reads", () => {
    expect(auditedVerb("POST", "/api/v1/namespaces/x/configmaps", false)).toBe("create");
    expect(auditedVerb("PUT", "/api/v1/namespaces/x/configmaps/a", false)).toBe("update");
    expect(auditedVerb("PATCH", "/api/v1/namespaces/x/configmaps/a", false)).toBe("patch");
    expect(auditedVerb("DELETE", "/api/v1/namespaces/x", false)).toBe("delete");
    expect(auditedVerb("GET", "/api/v1/namespaces", false)).toBeNull();
    expect(auditedVerb("GET", "/api/v1/namespaces/x/pods/p/exec", true)).toBe("exec");
    expect(auditedVerb("POST", "/api/v1/namespaces/x/pods/p/exec", true)).toBe("exec");
    expect(auditedVerb("POST", "/api/v1/namespaces/x/pods/p/attach", false)).toBe("attach");
    expect(auditedVerb("GET", "/api/v1/namespaces/x/pods/p/portforward", true)).toBe("portforward");
    expect(auditedVerb("GET", "/api/v1/namespaces/x/services/s/proxy", true)).toBe("connect");
  });
});

describe("isLongRunning", () => {
  const q = (query: string) => new URLSearchParams(query);
  it("recognises watches and followed logs", () => {
    expect(isLongRunning("GET", "/api/v1/namespaces", q("watch=true"))).toBe(true);
    expect(isLongRunning("GET", "/api/v1/namespaces", q("watch=1"))).toBe(true);
    expect(isLongRunning("GET", "/api/v1/watch/namespaces", q(""))).toBe(true);
    expect(isLongRunning("GET", "/apis/apps/v1/watch/deployments", q(""))).toBe(true);
    expect(isLongRunning("GET", "/api/v1/namespaces/x/pods/p/log", q("follow=true"))).toBe(true);
    expect(isLongRunning("GET", "/api/v1/namespaces/x/pods/p/log", q(""))).toBe(false);
    expect(isLongRunning("GET", "/api/v1/namespaces", q("watch=false"))).toBe(false);
    expect(isLongRunning("POST", "/api/v1/namespaces", q("watch=true"))).toBe(false);
    expect(isLongRunning("GET", "/api/v1/namespaces/watch", q(""))).toBe(false);
  });

  it("reads watch and follow as the API server does: only 0 and false are false", () => {
    for (const value of ["f", "F", "", "no", "off"]) {
      expect(isLongRunning("GET", "/api/v1/namespaces", q(`watch=${value}`))).toBe(true);
      expect(isLongRunning("GET", "/api/v1/namespaces/x/pods/p/log", q(`follow=${value}`))).toBe(true);
    }
    for (const value of ["0", "FALSE", "falſe"]) {
      expect(isLongRunning("GET", "/api/v1/namespaces", q(`watch=${value}`))).toBe(false);
    }
  });
});

describe("auditResult", () => {
  it("reads the status", () => {
    expect(auditResult(101)).toBe("success");
    expect(auditResult(201)).toBe("success");
    expect(auditResult(403)).toBe("denied");
    expect(auditResult(401)).toBe("denied");
    expect(auditResult(409)).toBe("failure");
    expect(auditResult(502)).toBe("failure");
  });
});
