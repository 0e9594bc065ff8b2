import net from "node:net";
import { describe, expect, it } from "vitest";
import { vnAgentKubeletArgs } from "@/server/provisioners/local";
import {
  componentFlagsOf,
  ephemeralPortRange,
  freeLoopbackPorts,
  listenPortWindow,
  renderKwokctlConfig,
  withAllComponentFlags,
  withComponentFlags,
} from "./kwokctl";

describe("ephemeralPortRange", () => {
  it("reads the kernel's range", () => {
    expect(ephemeralPortRange(() => "32768\t60999\n")).toEqual([32768, 60999]);
  });

  it("is null when it cannot be read or makes no sense", () => {
    const cases = ["", "32768", "abc def", "60999 32768", "0 100", "1024 70000"];
    for (const text of cases)
      expect(
        ephemeralPortRange(() => text),
        text,
      ).toBeNull();
    expect(
      ephemeralPortRange(() => {
        throw new Error("ENOENT");
      }),
    ).toBeNull();
  });
});

describe("listenPortWindow", () => {
  it("lies below the ephemeral range", () => {
    expect(listenPortWindow([32768, 60999])).toEqual([10_000, 32767]);
  });

  it("is null when there is no room below it or no range is known", () => {
    expect(listenPortWindow([10_500, 60999])).toBeNull();
    expect(listenPortWindow(null)).toBeNull();
  });
});

describe("freeLoopbackPorts", () => {
  it("gives distinct ports in the window that can be listened on", async () => {
    const window: [number, number] = [20_000, 29_999];
    const ports = await freeLoopbackPorts(8, window);
    expect(new Set(ports).size).toBe(8);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(window[0]);
      expect(port).toBeLessThanOrEqual(window[1]);
    }
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: "127.0.0.1", port: ports[0], exclusive: true }, resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });

  it("skips a port something listens on", async () => {
    const holder = net.createServer();
    const held = await new Promise<number>((resolve) =>
      holder.listen({ host: "127.0.0.1", port: 0 }, () =>
        resolve((holder.address() as net.AddressInfo).port),
      ),
    );
    try {
      // A window of one busy port: every try fails, so the kernel picks.
      const [port] = await freeLoopbackPorts(1, [held, held]);
      expect(port).not.toBe(held);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("lets the kernel pick without a window", async () => {
    const ports = await freeLoopbackPorts(3, null);
    expect(new Set(ports).size).toBe(3);
  });
});

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
