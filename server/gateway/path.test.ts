import { describe, expect, it } from "vitest";
import { isGatewayPath, isUnprefixedApiPath, parseGatewayPath, parseUnprefixedPath } from "./path";

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
