import { afterEach, describe, expect, it } from "vitest";
import { setWebhookEndpoint } from "@/server/admission/registration";
import { setVnAgentEndpoints } from "@/server/syncer/contracts";
import { connectTarget } from "./egress";
import { allowedByOperator, parseEgressAllowances } from "./egress-allowances";
import { throttleRefusals } from "./egress-audit";
import { createEgressPolicy, tokenBuckets } from "./egress-policy";

afterEach(() => {
  setWebhookEndpoint(null);
  setVnAgentEndpoints(null);
});

describe("operator egress allowances", () => {
  it("parses ranges and ports, and says what to fix in a bad entry", () => {
    expect(parseEgressAllowances(" 10.0.0.0/28:443, 10.244.3.9:* ,")).toEqual([
      { network: "10.0.0.0", prefix: 28, port: 443 },
      { network: "10.244.3.9", prefix: 32, port: "*" },
    ]);
    expect(() => parseEgressAllowances("example.com:443")).toThrow(/not an IP address/);
    expect(() => parseEgressAllowances("10.0.0.0/33:443")).toThrow(/prefix must be 0–32/);
    expect(() => parseEgressAllowances("10.0.0.1:70000")).toThrow(/port must be/);
    expect(() => parseEgressAllowances("10.0.0.1")).toThrow(/ADDRESS\[\/PREFIX\]:PORT/);
  });

  it("never allows this host, link-local or metadata addresses, however the range is written", () => {
    for (const entry of [
      "127.0.0.1:5432",
      "0.0.0.0/0:443",
      "169.254.169.254:80",
      "160.0.0.0/4:80",
      "[::1]:443",
      "[::ffff:7f00:1]:443",
      "[fe80::1]:443",
      "[::/0]:443",
    ]) {
      expect(() => parseEgressAllowances(entry), entry).toThrow(/no tenant's control plane may dial/);
    }
  });

  it("covers an address only in its range and on its port; names never", () => {
    const allow = parseEgressAllowances("10.0.0.0/28:443,10.244.3.9:*");
    expect(allowedByOperator(allow, { host: "10.0.0.5", port: 443 })).toBe(true);
    expect(allowedByOperator(allow, { host: "10.0.0.5", port: 80 })).toBe(false);
    expect(allowedByOperator(allow, { host: "10.0.0.20", port: 443 })).toBe(false);
    expect(allowedByOperator(allow, { host: "10.244.3.9", port: 5432 })).toBe(true);
    expect(allowedByOperator(allow, { host: "localhost", port: 443 })).toBe(false);
    expect(allowedByOperator(allow, { host: "::1", port: 443 })).toBe(false);
  });
});

describe("the egress policy, without a super cluster to ask", () => {
  const policy = createEgressPolicy({
    superCluster: () => null,
    allow: parseEgressAllowances("10.0.0.9:7000"),
  });

  it("lets the controlplane egress reach Ring0's webhook server, and the cluster egress not", async () => {
    setWebhookEndpoint({ baseUrl: "https://127.0.0.1:9443", caBundle: "" });
    expect(await policy("acme", "controlplane", { host: "127.0.0.1", port: 9443 })).toMatchObject({
      allowed: true,
      rule: "ring0-webhook",
    });
    expect(await policy("acme", "cluster", { host: "127.0.0.1", port: 9443 })).toMatchObject({
      allowed: false,
    });
    expect(await policy("acme", "controlplane", { host: "127.0.0.1", port: 9444 })).toMatchObject({
      allowed: false,
    });
  });

  it("lets the cluster egress reach a vn-agent by the port Ring0 gave it, and dials it at 127.0.0.1", async () => {
    setVnAgentEndpoints(new Map([["node-a", { node: "node-a", host: "localhost", port: 10551 }]]));
    expect(await policy("acme", "cluster", { host: "localhost", port: 10551 })).toEqual({
      allowed: true,
      dial: { host: "127.0.0.1", port: 10551 },
      rule: "vn-agent",
    });
    // Another port a vNode could be made to name, or the URL webhooks' egress: refused.
    expect(await policy("acme", "cluster", { host: "localhost", port: 5432 })).toMatchObject({
      allowed: false,
    });
    expect(await policy("acme", "controlplane", { host: "localhost", port: 10551 })).toMatchObject({
      allowed: false,
    });
  });

  it("never resolves a name, allows what the operator allows, and refuses the rest", async () => {
    expect(await policy("acme", "cluster", { host: "kubernetes.default.svc", port: 443 })).toEqual({
      allowed: false,
      why: "a name, not an address",
    });
    expect(await policy("acme", "controlplane", { host: "10.0.0.9", port: 7000 })).toMatchObject({
      allowed: true,
      rule: "operator",
    });
    for (const host of ["127.0.0.1", "169.254.169.254", "10.244.1.7"]) {
      expect(await policy("acme", "cluster", { host, port: 443 })).toMatchObject({ allowed: false });
    }
  });
});

describe("audited refusals", () => {
  const refusal = (tenant: string, port: number) => ({
    tenant,
    selection: "controlplane" as const,
    target: { host: "127.0.0.1", port },
    why: "no",
  });

  it("records a destination once a minute, counting the repeats in between", () => {
    let now = 0;
    const records: [number, number][] = [];
    const refuse = throttleRefusals((r, repeats) => records.push([r.target.port, repeats]), {
      now: () => now,
    });
    refuse(refusal("acme", 1));
    refuse(refusal("acme", 1));
    refuse(refusal("acme", 1));
    refuse(refusal("acme", 2));
    now = 60_000;
    refuse(refusal("acme", 1));
    expect(records).toEqual([
      [1, 0],
      [2, 0],
      [1, 2],
    ]);
  });

  it("keeps each tenant to its budget a minute, so a scan cannot flood the audit", () => {
    let now = 0;
    const records: string[] = [];
    const refuse = throttleRefusals((r) => records.push(`${r.tenant}:${r.target.port}`), {
      now: () => now,
      perTenant: 3,
    });
    for (let port = 1; port <= 100; port += 1) refuse(refusal("acme", port));
    refuse(refusal("globex", 1));
    expect(records).toEqual(["acme:1", "acme:2", "acme:3", "globex:1"]);
    now = 60_000;
    refuse(refusal("acme", 50));
    expect(records.at(-1)).toBe("acme:50");
  });
});

describe("CONNECT targets", () => {
  it("reads host and port, the scheme's default port included, and normalises the host once", () => {
    expect(connectTarget("CONNECT 10.244.1.7:80 HTTP/1.1")).toEqual({ host: "10.244.1.7", port: 80 });
    expect(connectTarget("CONNECT 10.244.1.7:443 HTTP/1.1")).toEqual({ host: "10.244.1.7", port: 443 });
    expect(connectTarget("CONNECT [::1]:8443 HTTP/1.1")).toEqual({ host: "::1", port: 8443 });
    expect(connectTarget("CONNECT localhost:10250 HTTP/1.0")).toEqual({ host: "localhost", port: 10250 });
    // Other spellings of an address become the address the policy checks and the proxy dials.
    expect(connectTarget("CONNECT 0x7f.1:5432 HTTP/1.1")).toEqual({ host: "127.0.0.1", port: 5432 });
    expect(connectTarget("CONNECT 2130706433:5432 HTTP/1.1")).toEqual({ host: "127.0.0.1", port: 5432 });
    expect(connectTarget("CONNECT LOCALHOST:1 HTTP/1.1")).toEqual({ host: "localhost", port: 1 });
  });

  it("refuses what is not host:port", () => {
    for (const line of [
      "CONNECT 10.0.0.1 HTTP/1.1",
      "CONNECT 10.0.0.1:0 HTTP/1.1",
      "CONNECT 10.0.0.1:65536 HTTP/1.1",
      "CONNECT user@10.0.0.1:80 HTTP/1.1",
      "CONNECT 10.0.0.1:80/x HTTP/1.1",
      "GET / HTTP/1.1",
      "CONNECT 10.0.0.1:80 HTTP/2",
    ]) {
      expect(connectTarget(line), line).toBeUndefined();
    }
  });
});

describe("lookup budgets", () => {
  it("lets a tenant spend its burst, then its rate, and no other tenant's", () => {
    let now = 0;
    const buckets = tokenBuckets(2, 3, () => now);
    expect([1, 2, 3, 4].map(() => buckets.take("acme"))).toEqual([true, true, true, false]);
    expect(buckets.take("globex")).toBe(true);
    now = 500;
    expect([buckets.take("acme"), buckets.take("acme")]).toEqual([true, false]);
  });
});
