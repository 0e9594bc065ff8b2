import { describe, expect, it } from "vitest";
import {
  gatewayLocation,
  isGatewayPath,
  isUnprefixedApiPath,
  parseGatewayPath,
  parseUnprefixedPath,
} from "./path";

describe("parseGatewayPath", () => {
  it("maps /k8s/tenants/<tenant>/<rest> to <rest> with its query, untouched", () => {
    expect(parseGatewayPath("/k8s/tenants/gw-a/api/v1/namespaces?watch=1&labelSelector=a%2Fb")).toMatchObject(
      {
        ok: true,
        tenant: "gw-a",
        apiPath: "/api/v1/namespaces",
        upstreamPath: "/api/v1/namespaces?watch=1&labelSelector=a%2Fb",
      },
    );
    expect(parseGatewayPath("/k8s/tenants/gw-a")).toMatchObject({
      ok: true,
      tenant: "gw-a",
      upstreamPath: "/",
    });
    expect(parseGatewayPath("/k8s/tenants/gw-a/?timeout=32s")).toMatchObject({
      ok: true,
      upstreamPath: "/?timeout=32s",
    });
    expect(parseGatewayPath("/k8s/tenants/gw-a/apis/")).toMatchObject({ ok: true, apiPath: "/apis/" });
  });

  it("keeps harmless percent-escapes as sent", () => {
    const parsed = parseGatewayPath("/k8s/tenants/gw-a/api/v1/namespaces/a%40b");
    expect(parsed).toMatchObject({ ok: true, upstreamPath: "/api/v1/namespaces/a%40b" });
  });

  it.each([
    "/k8s/tenants/gw-a/api/v1/namespaces/x%2F..%2Fy",
    "/k8s/tenants/gw-a/api/v1/namespaces/x%2fy",
    "/k8s/tenants/gw-a/api/%5Cv1",
    "/k8s/tenants/gw-a/../gw-b/api",
    "/k8s/tenants/gw-a/api/./v1",
    "/k8s/tenants/gw-a/api/%2e%2e/v1",
    "/k8s/tenants/gw-a/api/%2E/v1",
    "/k8s/tenants/gw-a//api/v1",
    "/k8s/tenants/gw-a/api/v1%00",
    "/k8s/tenants/gw-a/api/%zz",
    "/k8s/tenants/gw-a/api/v1%3Fwatch=1",
    "/k8s/tenants/gw-a/api#x",
    "/k8s/tenants/gw-a/api\\v1",
  ])("refuses the forged path %s with 400", (url) => {
    expect(parseGatewayPath(url)).toMatchObject({ ok: false, status: 400 });
  });

  it.each([
    "/k8s/tenants/",
    "/k8s/tenants",
    "/k8s/tenants/GW-A/api",
    "/k8s/tenants/gw%2Da/api",
    "/k8s/tenants/-gw/api",
    "/k8s/tenants/gw_a/api",
    `/k8s/tenants/${"a".repeat(64)}/api`,
    "/k8s/other",
    "/k8s/",
  ])("answers 404 for %s (no such tenant or gateway path)", (url) => {
    expect(parseGatewayPath(url)).toMatchObject({ ok: false, status: 404 });
  });

  it("refuses dot segments in the tenant position", () => {
    expect(parseGatewayPath("/k8s/tenants/../tenants/gw-b/api")).toMatchObject({ ok: false, status: 400 });
    expect(parseGatewayPath("/k8s/tenants/%2e%2e/api")).toMatchObject({ ok: false, status: 400 });
  });
});

describe("isGatewayPath", () => {
  it("claims /k8s and everything under /k8s/ only", () => {
    expect(isGatewayPath("/k8s/tenants/a/api")).toBe(true);
    expect(isGatewayPath("/k8s")).toBe(true);
    expect(isGatewayPath("/k8sx")).toBe(false);
    expect(isGatewayPath("/api/trpc")).toBe(false);
    expect(isGatewayPath(undefined)).toBe(false);
  });
});

describe("unprefixed API paths (kubectl get --raw, kubectl proxy)", () => {
  it("are Kubernetes API paths, parsed as strictly as the token's tenant's", () => {
    expect(isUnprefixedApiPath("/api/v1/pods?watch=1")).toBe(true);
    expect(isUnprefixedApiPath("/apis")).toBe(true);
    expect(isUnprefixedApiPath("/version")).toBe(true);
    expect(isUnprefixedApiPath("/apiserver")).toBe(false);
    expect(isUnprefixedApiPath("/")).toBe(false);
    expect(isUnprefixedApiPath("/k8s/tenants/a/api")).toBe(false);
    expect(parseUnprefixedPath("/api/v1/namespaces?limit=1", "gw-a")).toMatchObject({
      ok: true,
      tenant: "gw-a",
      apiPath: "/api/v1/namespaces",
      upstreamPath: "/api/v1/namespaces?limit=1",
    });
    // The same walls as a prefixed path: no dot segments, no encoded separators.
    expect(parseUnprefixedPath("/api/../k8s/tenants/gw-b/api", "gw-a")).toMatchObject({
      ok: false,
      status: 400,
    });
    expect(parseUnprefixedPath("/api/v1%2F..%2Fsecrets", "gw-a")).toMatchObject({ ok: false, status: 400 });
    expect(parseUnprefixedPath("/portal", "gw-a")).toMatchObject({ ok: false, status: 404 });
  });
});

describe("gatewayLocation", () => {
  const origin = "https://127.0.0.1:6443";
  const proxy = "/api/v1/namespaces/n/pods/p/proxy";
  it("brings the API server's absolute-path redirects back through the tenant's prefix", () => {
    // kube-apiserver answers GET pods/<name>/proxy with 301 Location: <path>/ (a path, no host).
    expect(gatewayLocation(`${proxy}/`, origin, "", "acme", proxy)).toBe(`/k8s/tenants/acme${proxy}/`);
    expect(gatewayLocation(`${origin}/api/v1/namespaces/n/services/s/proxy/?a=1`, origin, "", "acme")).toBe(
      "/k8s/tenants/acme/api/v1/namespaces/n/services/s/proxy/?a=1",
    );
  });
  it("strips the upstream's base path and drops what lies outside it", () => {
    expect(gatewayLocation("/cp/acme/api/v1/x/", origin, "/cp/acme", "acme")).toBe(
      "/k8s/tenants/acme/api/v1/x/",
    );
    expect(gatewayLocation(`${origin}/cp/acme`, origin, "/cp/acme", "acme")).toBe("/k8s/tenants/acme/");
    expect(gatewayLocation("/cp/globex/api", origin, "/cp/acme", "acme")).toBeNull();
    expect(gatewayLocation("/cp/acmeX/api", origin, "/cp/acme", "acme")).toBeNull();
    expect(gatewayLocation(`${origin}/other`, origin, "/cp/acme", "acme")).toBeNull();
    expect(gatewayLocation("/cp/acme/../globex/api", origin, "/cp/acme", "acme")).toBeNull();
  });
  it("resolves request-relative redirects (a pod behind pods/proxy picks them) and keeps them under the prefix", () => {
    expect(gatewayLocation("login/", origin, "", "acme", `${proxy}/app/`)).toBe(
      `/k8s/tenants/acme${proxy}/app/login/`,
    );
    // However many "..", the client stays in the tenant the request went to (never another tenant's prefix).
    expect(
      gatewayLocation(
        "../../../../../../../../api/v1/namespaces/default/pods/x",
        origin,
        "",
        "acme",
        `${proxy}/`,
      ),
    ).toBe("/k8s/tenants/acme/api/v1/namespaces/default/pods/x");
    expect(gatewayLocation("/../../k8s/tenants/globex/api", origin, "", "acme")).toBe(
      "/k8s/tenants/acme/k8s/tenants/globex/api",
    );
  });
  it("drops any that would leave for another host, or that parsers could read differently", () => {
    for (const location of [
      "https://evil.example/",
      "https://127.0.0.1:6444/api",
      "//evil.example/x",
      "/\\evil.example/x",
      "\\\\evil.example",
      "\\\t\\\tevil.example",
      "http\t://evil.example",
      "https://127.0.0.1:6443@evil.example/",
      "https://user:pass@127.0.0.1:6443/api",
      "javascript:alert(1)",
      "/api\r\nSet-Cookie: a=b",
      "",
    ]) {
      expect(gatewayLocation(location, origin, "", "acme", proxy), JSON.stringify(location)).toBeNull();
    }
  });
});
