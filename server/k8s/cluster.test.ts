import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { clusterHealth, clusterVersion, connectCluster, getSuperCluster, setSuperCluster } from "./cluster";
import { K8sConfigError, K8sError } from "./errors";

const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "${server}" } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

describe("connectCluster", () => {
  it("loads an inline kubeconfig", () => {
    const conn = connectCluster("t", { inline: kubeconfig("https://127.0.0.1:6443") });
    expect(conn).toMatchObject({ name: "t", server: "https://127.0.0.1:6443" });
  });

  it("names the file and the problem in one line", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-kc-"));
    try {
      const missing = path.join(dir, "missing.yaml");
      expect(() => connectCluster("t", { file: missing })).toThrow(
        new K8sConfigError(`kubeconfig ${missing}: file does not exist`),
      );
      const broken = path.join(dir, "broken.yaml");
      fs.writeFileSync(broken, "clusters: [unclosed");
      expect(() => connectCluster("t", { file: broken })).toThrow(/^kubeconfig .*broken\.yaml: [^\n]+$/);
      const noContext = path.join(dir, "no-context.yaml");
      fs.writeFileSync(noContext, kubeconfig("https://127.0.0.1:6443").replace("current-context: x", ""));
      expect(() => connectCluster("t", { file: noContext })).toThrow(
        /no-context\.yaml: no current-context set/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses in-cluster config outside a pod", () => {
    expect(() => connectCluster("t", { inCluster: true })).toThrow(
      /in-cluster config: KUBERNETES_SERVICE_HOST/,
    );
  });
});

describe("an unreachable cluster", () => {
  // Port 9 on 127.0.0.1 (discard) is closed here: connections are refused immediately.
  const conn = connectCluster("down", { inline: kubeconfig("https://127.0.0.1:9") });

  it("reports health without throwing", async () => {
    const health = await clusterHealth(conn, { timeoutMs: 2_000 });
    expect(health.ok).toBe(false);
    expect(health.detail).toContain("https://127.0.0.1:9");
  });

  it("throws Unreachable naming the server", async () => {
    const error = await clusterVersion(conn).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(K8sError);
    expect(error).toMatchObject({ reason: "Unreachable", status: 0 });
    expect((error as K8sError).message).toMatch(/https:\/\/127\.0\.0\.1:9 is unreachable/);
  });
});

describe("the super cluster slot", () => {
  it("lives on globalThis", () => {
    const conn = connectCluster("super", { inline: kubeconfig("https://127.0.0.1:6443") });
    setSuperCluster(conn);
    expect(getSuperCluster()).toBe(conn);
    expect((globalThis as Record<symbol, unknown>)[Symbol.for("ring0.k8s.superCluster")]).toBe(conn);
    setSuperCluster(null);
    expect(getSuperCluster()).toBeNull();
  });
});
