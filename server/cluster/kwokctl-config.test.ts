import { describe, expect, it } from "vitest";
import { vnAgentKubeletArgs } from "@/server/provisioners/local";
import {
  componentFlagsOf,
  renderKwokctlConfig,
  withAllComponentEnvs,
  withAllComponentFlags,
  withComponentEnvs,
  withComponentFlags,
} from "./kwokctl-config";

describe("withComponentFlags", () => {
  const saved = [
    "apiVersion: config.kwok.x-k8s.io/v1alpha1",
    "components:",
    "- args:",
    "  - --name=node0",
    "  binary: /x/etcd",
    "  name: etcd",
    "- args:",
    "  - --etcd-prefix=/registry",
    "  - --kubelet-client-certificate=/old.crt",
    "  - --secure-port=1234",
    "  binary: /x/kube-apiserver",
    "  command:",
    "  - kube-apiserver",
    "  name: kube-apiserver",
    "- args:",
    "  - --bind-address=127.0.0.1",
    "  name: kube-controller-manager",
    "kind: KwokctlConfiguration",
    "",
  ].join("\n");
  const args = vnAgentKubeletArgs("/state/tenants/acme");

  it("sets the vn-agent kubelet flags on kube-apiserver only, replacing an old value", () => {
    const patched = withComponentFlags(saved, "kube-apiserver", args) ?? "";
    expect(patched).toContain(
      "  - --kubelet-client-certificate=/state/tenants/acme/vn-agent/kubelet-client.crt",
    );
    expect(patched).toContain("  - --kubelet-client-key=/state/tenants/acme/vn-agent/kubelet-client.key");
    expect(patched).toContain(
      "  - --kubelet-certificate-authority=/state/tenants/acme/vn-agent/vn-agent-ca.crt",
    );
    expect(patched).not.toContain("/old.crt");
    expect(patched.indexOf("--kubelet-client-key")).toBeLessThan(
      patched.indexOf("  binary: /x/kube-apiserver"),
    );
    expect(patched.indexOf("--kubelet-client-key")).toBeGreaterThan(patched.indexOf("--secure-port=1234"));
    expect(patched.split("\n").filter((line: string) => line.includes("--kubelet")).length).toBe(3);
  });

  it("is idempotent, and undefined when there is no kube-apiserver component", () => {
    const once = withComponentFlags(saved, "kube-apiserver", args) ?? "";
    expect(withComponentFlags(once, "kube-apiserver", args)).toBe(once);
    expect(
      withComponentFlags("components:\n- args:\n  - --x\n  name: etcd\n", "kube-apiserver", args),
    ).toBeUndefined();
  });
});

describe("componentFlagsOf and withAllComponentFlags", () => {
  const saved = [
    "components:",
    "- args:",
    "  - --name=node0",
    "  - --listen-client-urls=http://127.0.0.1:2379",
    '  - "--initial-cluster=node0=http://127.0.0.1:2380"',
    "  name: etcd",
    "- args:",
    "  - --kubeconfig=/k/kubeconfig.yaml",
    "  - --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
    "  name: kube-controller-manager",
    "kind: KwokctlConfiguration",
    "",
  ].join("\n");

  it("reads flags, quoted or not", () => {
    const flags = componentFlagsOf(saved, "etcd");
    expect(flags?.get("listen-client-urls")).toBe("http://127.0.0.1:2379");
    expect(flags?.get("initial-cluster")).toBe("node0=http://127.0.0.1:2380");
    expect(componentFlagsOf(saved, "kube-scheduler")).toBeUndefined();
  });

  it("replaces and adds flags per component, or names the component that is missing", () => {
    const patched = withAllComponentFlags(saved, {
      etcd: {
        "listen-client-urls": "https://127.0.0.1:2379",
        "initial-cluster": "node0=https://127.0.0.1:2380",
        "client-cert-auth": "true",
      },
      "kube-controller-manager": { "authorization-always-allow-paths": "/healthz,/readyz,/livez" },
    });
    if ("missing" in patched) throw new Error(`missing ${patched.missing}`);
    const etcd = componentFlagsOf(patched.text, "etcd");
    expect(etcd?.get("listen-client-urls")).toBe("https://127.0.0.1:2379");
    expect(etcd?.get("initial-cluster")).toBe("node0=https://127.0.0.1:2380");
    expect(etcd?.get("client-cert-auth")).toBe("true");
    expect(patched.text).not.toContain("http://");
    expect(
      componentFlagsOf(patched.text, "kube-controller-manager")?.get("authorization-always-allow-paths"),
    ).toBe("/healthz,/readyz,/livez");
    expect(withAllComponentFlags(saved, { "kube-scheduler": { x: "1" } })).toEqual({
      missing: "kube-scheduler",
    });
  });
});

describe("renderComponentPatches", () => {
  it("overrides flags kwokctl sets and adds the others", () => {
    const text = renderKwokctlConfig({
      workDir: "/w",
      binDir: "/b",
      writer: "test",
      flags: { etcd: { "listen-client-urls": "https://127.0.0.1:1", "cert-file": "/p/etcd.crt" } },
    });
    expect(text).toContain(
      [
        "  - name: etcd",
        "    extraArgs:",
        '      - key: "listen-client-urls"',
        '        value: "https://127.0.0.1:1"',
        "        override: true",
      ].join("\n"),
    );
    expect(text).toContain(
      ['      - key: "cert-file"', '        value: "/p/etcd.crt"', "        override: false"].join("\n"),
    );
  });
});

describe("environment variables", () => {
  const saved = [
    "components:",
    "- args:",
    "  - --name=node0",
    "  binary: /x/etcd",
    "  envs:",
    "  - name: KEEP",
    '    value: "1"',
    "  - name: GOGC",
    '    value: "100"',
    "  name: etcd",
    "- args:",
    "  - --secure-port=1234",
    "  command:",
    "  - kube-apiserver",
    "  name: kube-apiserver",
    "kind: KwokctlConfiguration",
    "",
  ].join("\n");

  it("renders extraEnvs beside extraArgs, and envs alone", () => {
    const text = renderKwokctlConfig({
      workDir: "/w",
      binDir: "/b",
      writer: "test",
      flags: { etcd: { "cert-file": "/p/etcd.crt" } },
      envs: { etcd: { GOGC: "25" }, "kube-controller-manager": { GOGC: "25" } },
    });
    expect(text).toContain(
      ["        override: false", "    extraEnvs:", '      - name: "GOGC"', '        value: "25"'].join("\n"),
    );
    expect(text).toContain(
      ["  - name: kube-controller-manager", "    extraEnvs:", '      - name: "GOGC"'].join("\n"),
    );
    expect(text).not.toMatch(/kube-controller-manager\n {4}extraArgs/);
  });

  it("replaces a variable in a saved config, keeps the others, and adds a list where there is none", () => {
    const patched = withAllComponentEnvs(saved, {
      etcd: { GOGC: "25" },
      "kube-apiserver": { GOGC: "25" },
    });
    if (!("text" in patched)) throw new Error("missing component");
    const lines = patched.text.split("\n");
    expect(lines.slice(4, 10)).toEqual([
      "  envs:",
      "  - name: KEEP",
      '    value: "1"',
      "  - name: GOGC",
      '    value: "25"',
      "  name: etcd",
    ]);
    const apiserver = lines.slice(lines.indexOf("  - --secure-port=1234"));
    expect(apiserver.slice(0, 8)).toEqual([
      "  - --secure-port=1234",
      "  command:",
      "  - kube-apiserver",
      "  name: kube-apiserver",
      "  envs:",
      "  - name: GOGC",
      '    value: "25"',
      "kind: KwokctlConfiguration",
    ]);
    expect(withComponentEnvs(patched.text, "kube-apiserver", { GOGC: "25" })).toBe(patched.text);
    expect(withAllComponentEnvs(saved, { "kube-scheduler": { GOGC: "1" } })).toEqual({
      missing: "kube-scheduler",
    });
  });
});
