import { describe, expect, it } from "vitest";
import { admissionFiles } from "./admission";
import { authorizationKubeconfig } from "./authorization";

describe("a tenant API server's admission and authorization files", () => {
  it("loads Ring0's policies from two dirs, and presents the client certificate to webhooks only with vn-agents", () => {
    const files = admissionFiles("/state/tenants/acme", "/state/tenants/acme/vn-agent/webhook.kubeconfig");
    const config = JSON.parse(files["/state/tenants/acme/admission/config.json"] ?? "{}") as {
      plugins: { name: string; configuration: { staticManifestsDir?: string; kubeConfigFile?: string } }[];
    };
    expect(config.plugins.map((plugin) => plugin.name)).toEqual([
      "ValidatingAdmissionPolicy",
      "MutatingAdmissionPolicy",
      "ValidatingAdmissionWebhook",
    ]);
    expect(config.plugins[0]?.configuration.staticManifestsDir).toBe(
      "/state/tenants/acme/admission/validating",
    );
    expect(
      JSON.parse(files["/state/tenants/acme/admission/mutating/ring0.json"] ?? "{}").items.length,
    ).toBeGreaterThan(0);
    const without = JSON.parse(admissionFiles("/d")["/d/admission/config.json"] ?? "{}") as {
      plugins: unknown[];
    };
    expect(without.plugins).toHaveLength(2);
  });

  it("points the authorization webhook at Ring0's server, trusting only the vn-agent CA", () => {
    const kubeconfig = JSON.parse(
      authorizationKubeconfig("/d", { baseUrl: "https://127.0.0.1:4567", caBundle: "" }),
    ) as { clusters: { cluster: Record<string, string> }[]; users: { user: Record<string, string> }[] };
    expect(kubeconfig.clusters[0]?.cluster).toEqual({
      server: "https://127.0.0.1:4567/authorize",
      "certificate-authority": "/d/vn-agent/vn-agent-ca.crt",
    });
    expect(kubeconfig.users[0]?.user["client-certificate"]).toBe("/d/vn-agent/kubelet-client.crt");
  });
});
