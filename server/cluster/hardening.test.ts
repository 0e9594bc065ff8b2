import { describe, expect, it } from "vitest";
import type { PkiEntry } from "@/server/pki/directory";
import {
  ANONYMOUS_PATHS,
  anonymousHealthOnlyFlags,
  authenticationConfiguration,
  type EtcdPki,
  etcdTlsFlags,
  type NodePki,
  onlyComponents,
  simulatedKubeletFlags,
  singleInstanceFlags,
} from "./hardening";

const entry = (name: string): PkiEntry => ({
  cert: "",
  key: "",
  certFile: `/p/${name}.crt`,
  keyFile: `/p/${name}.key`,
});

describe("etcdTlsFlags", () => {
  const pki = {
    "etcd-ca": entry("ca"),
    "etcd-server": entry("server"),
    "apiserver-etcd-client": entry("client"),
  } as EtcdPki;
  const flags = etcdTlsFlags({ client: 2379, peer: 2380 }, pki);

  it("puts every etcd URL on https and demands client certificates on both ports", () => {
    const urls = Object.entries(flags.etcd ?? {}).filter(
      ([name]) => name.includes("url") || name === "initial-cluster",
    );
    expect(urls.length).toBe(5);
    for (const [, value] of urls) expect(value).toMatch(/https:\/\/127\.0\.0\.1:23(79|80)$/);
    expect(flags.etcd?.["client-cert-auth"]).toBe("true");
    expect(flags.etcd?.["peer-client-cert-auth"]).toBe("true");
    expect(flags.etcd?.["trusted-ca-file"]).toBe("/p/ca.crt");
  });

  it("gives kube-apiserver its own etcd client certificate", () => {
    expect(flags["kube-apiserver"]).toEqual({
      "etcd-servers": "https://127.0.0.1:2379",
      "etcd-cafile": "/p/ca.crt",
      "etcd-certfile": "/p/client.crt",
      "etcd-keyfile": "/p/client.key",
    });
  });
});

describe("anonymous access", () => {
  it("is authenticated only on health endpoints and /version", () => {
    const text = authenticationConfiguration();
    expect(text).toContain("kind: AuthenticationConfiguration");
    for (const path of ANONYMOUS_PATHS) expect(text).toContain(`    - path: ${path}\n`);
    expect(text.match(/- path:/g)?.length).toBe(ANONYMOUS_PATHS.length);
  });

  it("leaves controller-manager and scheduler metrics behind credentials", () => {
    const flags = anonymousHealthOnlyFlags("/c.yaml");
    expect(flags["kube-controller-manager"]?.["authorization-always-allow-paths"]).toBe(
      "/healthz,/readyz,/livez",
    );
    expect(
      onlyComponents(flags, ["kube-apiserver", "kube-controller-manager"])["kube-scheduler"],
    ).toBeUndefined();
  });
});

describe("singleInstanceFlags", () => {
  it("runs the one controller manager and scheduler without leader election (nothing restarts one that lost it)", () => {
    expect(singleInstanceFlags()).toEqual({
      "kube-controller-manager": { "leader-elect": "false" },
      "kube-scheduler": { "leader-elect": "false" },
    });
  });
});

describe("simulatedKubeletFlags", () => {
  it("gives kube-apiserver a kubelet client certificate and leaves kwok without a server", () => {
    const pki = {
      "kubelet-ca": entry("kubelet-ca"),
      "kubelet-client-ca": entry("kubelet-client-ca"),
      "sim-kubelet": entry("sim"),
      "apiserver-kubelet-client": entry("apiserver"),
      "vn-agent-kubelet-client": entry("vn-agent"),
    } as NodePki;
    const flags = simulatedKubeletFlags(pki);
    expect(flags["kube-apiserver"]?.["kubelet-certificate-authority"]).toBe("/p/kubelet-ca.crt");
    expect(flags["kwok-controller"]).toEqual({ "node-port": "0", "server-address": "" });
  });
});
