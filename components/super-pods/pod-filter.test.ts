import { describe, expect, it } from "vitest";
import {
  emptyFilter,
  filterChoices,
  filterFromSearch,
  filterSuperPods,
  noTenant,
  superPodsHref,
} from "./pod-filter";

const pods = [
  { namespace: "kube-system", name: "coredns-abc", node: "kwok-1", tenant: null },
  { namespace: "r0-acme-default", name: "web", node: "kwok-1", tenant: "acme" },
  { namespace: "r0-acme-shop", name: "cart", node: "kwok-2", tenant: "acme" },
  { namespace: "r0-globex-default", name: "web", node: null, tenant: "globex" },
];

describe("filterSuperPods", () => {
  it("keeps every pod without a filter", () => {
    expect(filterSuperPods(pods, emptyFilter)).toEqual(pods);
  });

  it("filters by namespace, tenant and node together", () => {
    expect(filterSuperPods(pods, { ...emptyFilter, tenant: "acme" }).map((pod) => pod.name)).toEqual([
      "web",
      "cart",
    ]);
    expect(filterSuperPods(pods, { ...emptyFilter, tenant: "acme", node: "kwok-2" })).toEqual([pods[2]]);
    expect(filterSuperPods(pods, { ...emptyFilter, namespace: "kube-system" })).toEqual([pods[0]]);
  });

  it("'none' keeps only the super cluster's own pods", () => {
    expect(filterSuperPods(pods, { ...emptyFilter, tenant: noTenant })).toEqual([pods[0]]);
  });

  it("matches every word of the text, case-insensitively, in namespace/name, node and tenant", () => {
    expect(filterSuperPods(pods, { ...emptyFilter, text: "WEB globex" })).toEqual([pods[3]]);
    expect(filterSuperPods(pods, { ...emptyFilter, text: "acme-default/web" })).toEqual([pods[1]]);
    expect(filterSuperPods(pods, { ...emptyFilter, text: "kwok-2" })).toEqual([pods[2]]);
    expect(filterSuperPods(pods, { ...emptyFilter, text: "nothing" })).toEqual([]);
  });
});

describe("filterChoices", () => {
  it("lists distinct namespaces and tenants, sorted, without the missing tenant", () => {
    expect(filterChoices(pods)).toEqual({
      namespaces: ["kube-system", "r0-acme-default", "r0-acme-shop", "r0-globex-default"],
      tenants: ["acme", "globex"],
    });
  });
});

describe("filter links", () => {
  it("round-trips through the URL", () => {
    const href = superPodsHref({ node: "kwok-1", tenant: "acme" });
    expect(href).toBe("/operator/pods?node=kwok-1&tenant=acme");
    const search = Object.fromEntries(new URL(href, "http://x").searchParams);
    expect(filterFromSearch(search)).toEqual({ ...emptyFilter, node: "kwok-1", tenant: "acme" });
  });

  it("takes the first of repeated values and is plain without a filter", () => {
    expect(filterFromSearch({ node: ["a", "b"], other: "x" })).toEqual({ ...emptyFilter, node: "a" });
    expect(superPodsHref({})).toBe("/operator/pods");
  });
});
