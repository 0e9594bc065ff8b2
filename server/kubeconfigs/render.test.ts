// js-yaml arrives with @kubernetes/client-node; here it only reads back what the renderer wrote.
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { generateToken } from "@/server/tokens/format";
import { kubeconfigFilename, renderUserKubeconfig, tenantGatewayUrl } from "./render";

interface ParsedKubeconfig {
  apiVersion: string;
  kind: string;
  clusters: { name: string; cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  "current-context": string;
}

const token = generateToken(() => new Uint8Array(32).fill(7));

function parse(text: string): ParsedKubeconfig {
  return load(text) as ParsedKubeconfig;
}

describe("renderUserKubeconfig", () => {
  it("points one cluster at the tenant's gateway URL with the token as the user", () => {
    const text = renderUserKubeconfig({
      gatewayUrl: "https://localhost:3443",
      tenant: "acme",
      user: "acme:acme-admin",
      token,
    });
    const config = parse(text);
    expect(config).toMatchObject({ apiVersion: "v1", kind: "Config", "current-context": "acme" });
    expect(config.clusters).toEqual([
      { name: "ring0-acme", cluster: { server: "https://localhost:3443/k8s/tenants/acme" } },
    ]);
    expect(config.users).toEqual([{ name: "acme:acme-admin@ring0-acme", user: { token } }]);
    expect(config.contexts).toEqual([
      { name: "acme", context: { cluster: "ring0-acme", user: "acme:acme-admin@ring0-acme" } },
    ]);
  });

  it("carries no admin material and, without a CA, no CA data", () => {
    for (const gatewayUrl of ["http://localhost:3000", "https://ring0.example.com/"]) {
      const text = renderUserKubeconfig({ gatewayUrl, tenant: "globex", user: "Gina Admin", token });
      const config = parse(text);
      expect(Object.keys(config.clusters[0]!.cluster)).toEqual(["server"]);
      expect(Object.keys(config.users[0]!.user)).toEqual(["token"]);
      expect(text).not.toMatch(/certificate|client-key|insecure|BEGIN/);
    }
    const https = parse(
      renderUserKubeconfig({ gatewayUrl: "https://ring0.example.com/", tenant: "globex", user: "g", token }),
    );
    expect(https.clusters[0]!.cluster.server).toBe("https://ring0.example.com/k8s/tenants/globex");
  });

  it("embeds the gateway's CA as certificate-authority-data, never skipping verification", () => {
    const caPem = `-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n`;
    const text = renderUserKubeconfig({
      gatewayUrl: "https://localhost:3443",
      caPem,
      tenant: "acme",
      user: "u",
      token,
    });
    const cluster = parse(text).clusters[0]!.cluster;
    expect(Object.keys(cluster)).toEqual(["server", "certificate-authority-data"]);
    expect(Buffer.from(cluster["certificate-authority-data"] as string, "base64").toString("utf8")).toBe(
      caPem,
    );
    expect(text).not.toMatch(/insecure|client-key|PRIVATE/);
    expect(() =>
      renderUserKubeconfig({
        gatewayUrl: "https://x.test",
        caPem: "not a pem",
        tenant: "acme",
        user: "u",
        token,
      }),
    ).toThrow(/caPem/);
  });

  it("quotes names that YAML would otherwise read differently", () => {
    const config = parse(
      renderUserKubeconfig({ gatewayUrl: "https://x.test", tenant: "a1", user: 'yes: "no" # maybe', token }),
    );
    expect(config.users[0]!.name).toBe('yes: "no" # maybe@ring0-a1');
  });

  it("refuses bad input, naming the field", () => {
    const valid = { gatewayUrl: "https://x.test", tenant: "acme", user: "u", token };
    expect(() => renderUserKubeconfig({ ...valid, gatewayUrl: "ftp://x" })).toThrow(/gatewayUrl/);
    expect(() => renderUserKubeconfig({ ...valid, tenant: "Not A Tenant" })).toThrow(/tenant/);
    expect(() => renderUserKubeconfig({ ...valid, token: "r0_short" })).toThrow(/token/);
    expect(() => renderUserKubeconfig({ ...valid, user: " " })).toThrow(/user/);
  });

  it("names the download and the gateway URL after the tenant", () => {
    expect(kubeconfigFilename("acme")).toBe("acme.kubeconfig");
    expect(tenantGatewayUrl("https://r.example/", "acme")).toBe("https://r.example/k8s/tenants/acme");
  });
});
