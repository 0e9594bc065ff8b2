import { describe, expect, it } from "vitest";
import { TENANT_APISERVER_ORGANIZATION, tenantFromCertificate } from "./identity";
import { forbiddenMessage, mayReach, parseKubeletRequest, upstreamTarget } from "./requests";

const keys = { tenantLabel: "ring0.dev/tenant", namespaceAnnotation: "ring0.dev/tenant-namespace" };

function parsed(method: string, target: string) {
  const result = parseKubeletRequest(method, target);
  if (!result.ok) throw new Error(result.message);
  return result.request;
}

describe("parseKubeletRequest", () => {
  it("accepts the four kubelet verbs the apiserver uses, keeping only their own query parameters", () => {
    expect(
      parsed(
        "GET",
        "/containerLogs/default/web/app?follow=true&tailLines=5&timestamps=true&sinceSeconds=9&previous=false&limitBytes=10&evil=1",
      ),
    ).toEqual({
      verb: "containerLogs",
      namespace: "default",
      pod: "web",
      container: "app",
      query: [
        ["follow", "true"],
        ["tailLines", "5"],
        ["timestamps", "true"],
        ["sinceSeconds", "9"],
        ["previous", "false"],
        ["limitBytes", "10"],
      ],
    });
    expect(
      parsed("POST", "/exec/ns/p/c?command=sh&command=-c&command=echo%20hi&input=1&output=1&tty=1").query,
    ).toEqual([
      ["command", "sh"],
      ["command", "-c"],
      ["command", "echo hi"],
      ["input", "1"],
      ["output", "1"],
      ["tty", "1"],
    ]);
    expect(parsed("GET", "/attach/ns/p/c?output=1").verb).toBe("attach");
    expect(parsed("POST", "/portForward/ns/p")).toMatchObject({
      verb: "portForward",
      namespace: "ns",
      pod: "p",
    });
  });

  it("answers 404 for every other kubelet path", () => {
    for (const target of [
      "/",
      "/pods",
      "/metrics",
      "/stats/summary",
      "/run/ns/p/c",
      "/runningpods/",
      "/configz",
      "/logs/",
    ]) {
      expect(parseKubeletRequest("GET", target), target).toMatchObject({ ok: false, status: 404 });
    }
    expect(parseKubeletRequest("GET", "/containerLogs/ns/p")).toMatchObject({ ok: false, status: 404 });
    expect(parseKubeletRequest("GET", "/portForward/ns/p/c")).toMatchObject({ ok: false, status: 404 });
  });

  it("refuses other methods and names that are not plain DNS names (no dot segments, no encoded slashes)", () => {
    expect(parseKubeletRequest("DELETE", "/exec/ns/p/c")).toMatchObject({ ok: false, status: 405 });
    expect(parseKubeletRequest("POST", "/containerLogs/ns/p/c")).toMatchObject({ ok: false, status: 405 });
    for (const target of [
      "/containerLogs/../p/c",
      "/containerLogs/ns/%2e%2e/c",
      "/containerLogs/ns%2Fother/p/c",
      "/containerLogs/NS/p/c",
      "/exec/ns/p/c%2F..",
      `/exec/${"a".repeat(64)}/p/c`,
    ]) {
      expect(parseKubeletRequest("GET", target), target).toMatchObject({ ok: false, status: 400 });
    }
  });
});

describe("upstreamTarget", () => {
  it("keeps the verb, pod and container, and puts the super cluster's namespace in", () => {
    expect(upstreamTarget(parsed("GET", "/containerLogs/default/web/app?tailLines=3"), "t1234-default")).toBe(
      "/containerLogs/t1234-default/web/app?tailLines=3",
    );
    expect(upstreamTarget(parsed("POST", "/portForward/default/web?port=80"), "t1234-default")).toBe(
      "/portForward/t1234-default/web?port=80",
    );
  });
});

describe("mayReach", () => {
  const request = parsed("GET", "/containerLogs/default/web/app");
  const pod = {
    labels: { "ring0.dev/tenant": "acme" },
    annotations: { "ring0.dev/tenant-namespace": "default" },
    nodeName: "node-1",
  };
  it("allows the tenant's own pod bound to the agent's node", () => {
    expect(mayReach("acme", request, "node-1", pod, keys)).toEqual({ allowed: true });
  });
  it("refuses a missing pod, another tenant's, one from another namespace and one on another node", () => {
    expect(mayReach("acme", request, "node-1", undefined, keys).allowed).toBe(false);
    expect(mayReach("globex", request, "node-1", pod, keys).allowed).toBe(false);
    expect(mayReach("acme", request, "node-2", pod, keys).allowed).toBe(false);
    expect(
      mayReach(
        "acme",
        request,
        "node-1",
        { ...pod, annotations: { "ring0.dev/tenant-namespace": "other" } },
        keys,
      ).allowed,
    ).toBe(false);
    expect(mayReach("acme", request, "node-1", { ...pod, labels: {} }, keys).allowed).toBe(false);
  });
  it("gives the caller one message for every refusal (no existence oracle)", () => {
    expect(forbiddenMessage(request)).toBe("no pod default/web of this tenant runs on this node");
  });
});

describe("tenantFromCertificate", () => {
  it("takes the tenant from the CN of a tenant apiserver's certificate", () => {
    expect(tenantFromCertificate({ CN: "acme", O: TENANT_APISERVER_ORGANIZATION })).toEqual({
      tenant: "acme",
    });
  });
  it("refuses other organisations, several CNs or Os, and CNs that are not tenant names", () => {
    for (const subject of [
      undefined,
      { CN: "acme" },
      { CN: "acme", O: "system:masters" },
      { CN: "acme", O: [TENANT_APISERVER_ORGANIZATION, "system:masters"] },
      { CN: ["acme", "globex"], O: TENANT_APISERVER_ORGANIZATION },
      { CN: "Acme", O: TENANT_APISERVER_ORGANIZATION },
      { CN: "../acme", O: TENANT_APISERVER_ORGANIZATION },
      { CN: "", O: TENANT_APISERVER_ORGANIZATION },
    ]) {
      expect(tenantFromCertificate(subject), JSON.stringify(subject)).toHaveProperty("refused");
    }
  });
});
