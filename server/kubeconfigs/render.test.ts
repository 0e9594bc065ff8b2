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
      publicUrl: "http://localhost:3000",
      tenant: "acme",
      user: "acme:acme-admin",
      token,
    });
    const config = parse(text);
    expect(config).toMatchObject({ apiVersion: "v1", kind: "Config", "current-context": "acme" });
    expect(config.clusters).toEqual([
      { name: "ring0-acme", cluster: { server: "http://localhost:3000/k8s/tenants/acme" } },
    ]);
    expect(config.users).toEqual([{ name: "acme:acme-admin@ring0-acme", user: { token } }]);
    expect(config.contexts).toEqual([
      { name: "acme", context: { cluster: "ring0-acme", user: "acme:acme-admin@ring0-acme" } },
    ]);
  });

  it("carries no admin material and no CA data, over http or https", () => {
    for (const publicUrl of ["http://localhost:3000", "https://ring0.example.com/"]) {
      const text = renderUserKubeconfig({ publicUrl, tenant: "globex", user: "Gina Admin", token });
      const config = parse(text);
      expect(Object.keys(config.clusters[0]!.cluster)).toEqual(["server"]);
      expect(Object.keys(config.users[0]!.user)).toEqual(["token"]);
      expect(text).not.toMatch(/certificate|client-key|insecure|BEGIN/);
    }
    const https = parse(
      renderUserKubeconfig({ publicUrl: "https://ring0.example.com/", tenant: "globex", user: "g", token }),
    );
    expect(https.clusters[0]!.cluster.server).toBe("https://ring0.example.com/k8s/tenants/globex");
  });

  it("quotes names that YAML would otherwise read differently", () => {
    const config = parse(
      renderUserKubeconfig({ publicUrl: "http://x.test", tenant: "a1", user: 'yes: "no" # maybe', token }),
    );
    expect(config.users[0]!.name).toBe('yes: "no" # maybe@ring0-a1');
  });

  it("refuses bad input, naming the field", () => {
    const valid = { publicUrl: "http://x.test", tenant: "acme", user: "u", token };
    expect(() => renderUserKubeconfig({ ...valid, publicUrl: "ftp://x" })).toThrow(/publicUrl/);
    expect(() => renderUserKubeconfig({ ...valid, tenant: "Not A Tenant" })).toThrow(/tenant/);
    expect(() => renderUserKubeconfig({ ...valid, token: "r0_short" })).toThrow(/token/);
    expect(() => renderUserKubeconfig({ ...valid, user: " " })).toThrow(/user/);
  });

  it("names the download and the gateway URL after the tenant", () => {
    expect(kubeconfigFilename("acme")).toBe("acme.kubeconfig");
    expect(tenantGatewayUrl("https://r.example/", "acme")).toBe("https://r.example/k8s/tenants/acme");
  });
});
