import { describe, expect, it } from "vitest";
import { renderKwokctlConfig } from "@/server/cluster/kwokctl-config";
import { ControlPlaneSpecError } from "../types";
import { resolveVersion } from "../versions";
import {
  checkTenantName,
  localClusterName,
  parseLocalRecord,
  replaceBinDir,
  replacePorts,
  sortVersionsNewestFirst,
} from ".";

const record = {
  version: "1.36.4",
  binDir: "/cache/kube/abc/bin",
  ports: { kubeApiserverPort: 40001, etcdPort: 40002, etcdPeerPort: 40003, kubeControllerManagerPort: 40004 },
  createdAt: "2026-11-21T08:00:00.000Z",
  stopped: false,
};

describe("the local provisioner's record", () => {
  it("round-trips and defaults `stopped` to false", () => {
    expect(parseLocalRecord(JSON.stringify(record))).toEqual(record);
    const { stopped: _, ...withoutStopped } = record;
    expect(parseLocalRecord(JSON.stringify(withoutStopped))).toEqual(record);
    expect(parseLocalRecord(JSON.stringify({ ...record, stopped: true, extra: 1 }))).toEqual({
      ...record,
      stopped: true,
    });
  });

  it("is undefined when malformed or incomplete (a half-written file)", () => {
    expect(parseLocalRecord("")).toBeUndefined();
    expect(parseLocalRecord('{"version":')).toBeUndefined();
    expect(parseLocalRecord("null")).toBeUndefined();
    expect(parseLocalRecord("{}")).toBeUndefined();
    expect(
      parseLocalRecord(JSON.stringify({ ...record, ports: { ...record.ports, etcdPort: 0 } })),
    ).toBeUndefined();
    expect(
      parseLocalRecord(JSON.stringify({ ...record, ports: { ...record.ports, etcdPort: "40002" } })),
    ).toBeUndefined();
    expect(parseLocalRecord(JSON.stringify({ ...record, binDir: undefined }))).toBeUndefined();
  });
});

describe("tenant names", () => {
  it("accepts DNS labels up to 40 characters and names the kwokctl cluster after them", () => {
    expect(checkTenantName("acme")).toBe("acme");
    expect(checkTenantName("a-1")).toBe("a-1");
    expect(checkTenantName("a".repeat(40))).toBe("a".repeat(40));
    expect(localClusterName("acme")).toBe("ring0-acme");
  });

  it.each(["", "Acme", "-acme", "acme-", "../etc", "a/b", "a.b", "a b", "a".repeat(41)])(
    "refuses %j",
    (name) => {
      expect(() => checkTenantName(name)).toThrow(ControlPlaneSpecError);
    },
  );
});

describe("versions → binaries", () => {
  it("orders versions newest first so a minor resolves to its newest patch", () => {
    const versions = sortVersionsNewestFirst(["1.36.4", "1.99.0", "1.36.10", "1.9.1"]);
    expect(versions).toEqual(["1.99.0", "1.36.10", "1.36.4", "1.9.1"]);
    expect(resolveVersion("1.36", versions)).toBe("1.36.10");
    expect(resolveVersion("v1.36.4", versions)).toBe("1.36.4");
    expect(() => resolveVersion("1.12", versions)).toThrow(/1\.99\.0, 1\.36\.10, 1\.36\.4, 1\.9\.1/);
  });
});

const savedClusterConfig = `apiVersion: config.kwok.x-k8s.io/v1alpha1
components:
- args:
  - --quota-backend-bytes=8589934592
  - --data-dir=/state/tenants/acme/clusters/ring0-acme/etcd
  - --listen-peer-urls=http://127.0.0.1:40003
  - --listen-client-urls=http://127.0.0.1:40002
  binary: /state/tenants/acme/clusters/ring0-acme/bin/etcd
  metric:
    host: 127.0.0.1:40002
  ports:
  - name: peer-http
    port: 40003
  version: 3.6.8
- args:
  - --etcd-servers=http://127.0.0.1:40002
  - --secure-port=40001
  - --node-monitor-period=25s
  name: kube-apiserver
options:
  etcdBinary: /cache/kube/abc/bin/etcd
  etcdPeerPort: 40003
  etcdPort: 40002
  kubeApiserverPort: 40001
  kwokControllerPort: 40009
---
kind: Stage
spec:
  delay: 40001
`;

describe("rewriting kwokctl's saved cluster config", () => {
  it("moves ports in port positions of the first document only", () => {
    const moves = new Map([
      [40001, 50001],
      [40002, 50002],
      [40003, 50003],
    ]);
    const moved = replacePorts(savedClusterConfig, moves);
    expect(moved).toContain("--listen-peer-urls=http://127.0.0.1:50003");
    expect(moved).toContain("--listen-client-urls=http://127.0.0.1:50002");
    expect(moved).toContain("host: 127.0.0.1:50002");
    expect(moved).toContain("port: 50003");
    expect(moved).toContain("--secure-port=50001");
    expect(moved).toContain("kubeApiserverPort: 50001");
    expect(moved).toContain("etcdPeerPort: 50003");
    // Numbers that are not ports, and later documents, stay.
    expect(moved).toContain("--quota-backend-bytes=8589934592");
    expect(moved).toContain("delay: 40001");
    expect(moved).toContain("kwokControllerPort: 40009");
    expect(moved.split("---")[0]).not.toMatch(/\b4000[123]\b/);
  });

  it("moves the server of a kubeconfig", () => {
    const kubeconfig = "clusters:\n- cluster:\n    server: https://127.0.0.1:40001\n";
    expect(replacePorts(kubeconfig, new Map([[40001, 50001]]))).toBe(
      "clusters:\n- cluster:\n    server: https://127.0.0.1:50001\n",
    );
  });

  it("points binaries at another bin dir", () => {
    const moved = replaceBinDir(savedClusterConfig, "/cache/kube/abc/bin", "/cache/kube/def/bin");
    expect(moved).toContain("etcdBinary: /cache/kube/def/bin/etcd");
    expect(moved).toContain("binary: /state/tenants/acme/clusters/ring0-acme/bin/etcd");
  });
});

describe("the KwokctlConfiguration Ring0 writes", () => {
  it("binds to 127.0.0.1, names every binary and sets the chosen ports", () => {
    const text = renderKwokctlConfig({
      workDir: "/state/tenants/acme",
      binDir: "/cache/kube/abc/bin",
      writer: "test",
      ports: record.ports,
    });
    expect(text).toContain("  bindAddress: 127.0.0.1\n");
    expect(text).toContain('  kubeApiserverBinary: "/cache/kube/abc/bin/kube-apiserver"\n');
    expect(text).toContain('  etcdBinary: "/cache/kube/abc/bin/etcd"\n');
    expect(text).toContain('  cacheDir: "/state/tenants/acme/cache"\n');
    for (const [option, port] of Object.entries(record.ports))
      expect(text).toContain(`  ${option}: ${port}\n`);
    expect(text).not.toContain("enableCRDs");
    expect(text).not.toMatch(/https?:\/\//);
  });
});
