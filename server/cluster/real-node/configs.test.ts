import { describe, expect, it } from "vitest";
import {
  cniConflist,
  containerdConfig,
  containerdHostDir,
  kubeletConfig,
  kubeProxyConfig,
  registryConfig,
  registryHostsToml,
  runscConfig,
} from "./configs";
import { firewallRestoreText, firewallRules, UNWRITTEN_TENANTS_RULES } from "./host-firewall";
import { realNodeIndex, realNodeName, realNodePlan } from "./plan";

const plan = realNodePlan("/state", 2);

describe("a real node's plan", () => {
  it("gives each node its own name, node IP, subnet, bridge and cgroup root under the state dir", () => {
    expect(plan).toMatchObject({
      name: "ring0-real-2",
      nodeIp: "10.244.2.1",
      subnet: "10.244.2.0/24",
      bridge: "ring0br2",
      cgroupRoot: "/ring0/ring0-real-2",
      dir: "/state/real-nodes/ring0-real-2",
    });
    const { registryHosts, containerdState, ...own } = plan.paths;
    for (const file of Object.values(own)) expect(file.startsWith(`${plan.dir}/`)).toBe(true);
    // Runtime state (pod network namespaces) under /run, one dir per node of this state dir.
    expect(containerdState.startsWith(`${plan.runtimeDir}/`)).toBe(true);
    expect(plan.runtimeDir).toMatch(/^\/run\/ring0\/nodes\/ring0-real-2-[0-9a-f]{12}$/);
    expect(realNodePlan("/other", 2).runtimeDir).not.toBe(plan.runtimeDir);
    // One registry per host, outside the node's dir: its images outlive the node.
    expect(registryHosts).toBe("/state/registry/hosts.d");
    expect(realNodeIndex(realNodeName(7))).toBe(7);
    expect(realNodeIndex("ring0-real-07")).toBeUndefined();
    expect(() => realNodePlan("/state", 8)).toThrow(/out of range/);
  });

  it("gives each node's bridge its own fixed MAC: locally administered, unicast, never a port's", () => {
    const macs = Array.from({ length: 8 }, (_, index) => realNodePlan("/state", index).bridgeMac);
    expect(new Set(macs).size).toBe(8);
    for (const mac of macs) {
      expect(mac).toMatch(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
      const first = Number.parseInt(mac.slice(0, 2), 16);
      expect(first & 0b10).toBe(0b10); // locally administered: no vendor's veth has it
      expect(first & 0b1).toBe(0); // unicast
    }
    expect(realNodePlan("/other", 2).bridgeMac).toBe(plan.bridgeMac);
  });
});

describe("a real node's configuration", () => {
  it("containerd: CRI on runc and cgroupfs, oom_score_adj clamped, netns under its state dir, no TCP", () => {
    const text = containerdConfig(plan);
    expect(text).toContain("restrict_oom_score_adj = true");
    expect(text).toContain("netns_mounts_under_state_dir = true");
    expect(text).toContain('sandbox = "localhost/ring0/pause:1"');
    expect(text).toContain("disable_tcp_service = true");
    expect(text).toContain('stream_server_address = "127.0.0.1"');
    expect(text).toContain(`address = "${plan.paths.containerdSocket}"`);
    expect(text).toContain('config_path = "/state/registry/hosts.d"');
    // No sandbox without gVisor's binaries.
    expect(text).not.toContain("runsc");
  });

  it("containerd with gVisor: a runsc runtime on Ring0's shim and runsc, systrap, state under the node", () => {
    const text = containerdConfig(plan, "/cache/sandbox/bin");
    expect(text).toContain('[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runsc]');
    expect(text).toContain('runtime_type = "io.containerd.runsc.v1"');
    expect(text).toContain('runtime_path = "/cache/sandbox/bin/containerd-shim-runsc-v1"');
    expect(text).toContain(`ConfigPath = "${plan.paths.runscConfig}"`);
    // runc stays the default runtime.
    expect(text).toContain('default_runtime_name = "runc"');
    const runsc = runscConfig(plan, "/cache/sandbox/bin");
    expect(runsc).toContain('binary_name = "/cache/sandbox/bin/runsc"');
    expect(runsc).toContain(`root = "${plan.paths.runscRoot}"`);
    expect(runsc).toContain('platform = "systrap"');
  });

  it("registry: loopback only, storage on disk, no debug listener; every host pulls from it and nowhere else", () => {
    const config = registryConfig({
      port: 5123,
      storage: "/state/registry/storage",
      secret: "a".repeat(64),
      htpasswd: "/state/registry/htpasswd",
    });
    expect(config).toContain("addr: 127.0.0.1:5123");
    expect(config).toContain('rootdirectory: "/state/registry/storage"');
    expect(config).not.toMatch(/debug|proxy|remoteurl/);
    expect(config).toMatch(/delete:\n {4}enabled: false/);
    expect(config).toContain('path: "/state/registry/htpasswd"');
    const dockerHub = registryHostsToml(5123, "docker.io", "Basic cmluZzA6eA==");
    expect(dockerHub).toContain('server = "http://127.0.0.1:5123/v2/docker.io"');
    expect(dockerHub).toContain("override_path = true");
    expect(dockerHub).toContain('capabilities = ["pull", "resolve"]');
    // No [host] entries: the server above is the only place containerd asks (no fallback upstream).
    expect(dockerHub).not.toContain("[host");
    expect(dockerHub).toContain('[header]\n  Authorization = "Basic cmluZzA6eA=="');
    expect(registryHostsToml(5123, "localhost:5000", "Basic x")).toContain("/v2/localhost-5000");
    expect(registryHostsToml(5123, "_default", "Basic x")).toContain("/v2/ring0-unlisted-host");
    expect(() => registryHostsToml(5123, 'evil"\nserver', "Basic x")).toThrow(/bad registry host/);
    expect(containerdHostDir("localhost:5000")).toBe("localhost_5000_");
    expect(containerdHostDir("quay.io")).toBe("quay.io");
  });

  it("CNI: the node's bridge and subnet, routes to pods and Services only, no masquerade", () => {
    const network = JSON.parse(cniConflist(plan)) as {
      plugins: {
        type: string;
        bridge?: string;
        ipMasq?: boolean;
        ipam?: { routes: { dst: string }[]; ranges: unknown };
      }[];
    };
    const bridge = network.plugins[0];
    expect(bridge).toMatchObject({ type: "bridge", bridge: "ring0br2", ipMasq: false });
    expect(bridge?.ipam?.routes.map((route) => route.dst)).toEqual(["10.244.0.0/16", "10.0.0.0/24"]);
    expect(JSON.stringify(bridge?.ipam?.ranges)).toContain("10.244.2.0/24");
  });

  it("kubelet: its node IP, no anonymous access, webhook authorization, client certificates of the given CA", () => {
    const text = kubeletConfig(plan, {
      clientCaFile: "/pki/kubelet-client-ca.crt",
      tlsCertFile: "/pki/serving.crt",
      tlsKeyFile: "/pki/serving.key",
      healthzPort: 31000,
    });
    expect(text).toContain("address: 10.244.2.1");
    expect(text).toContain("readOnlyPort: 0");
    expect(text).toContain("anonymous: {enabled: false}");
    expect(text).toContain("authorization: {mode: Webhook}");
    expect(text).toContain('x509: {clientCAFile: "/pki/kubelet-client-ca.crt"}');
    expect(text).toContain("healthzBindAddress: 127.0.0.1");
    expect(text).toContain("failCgroupV1: false");
    expect(text).toContain('cgroupRoot: "/ring0/ring0-real-2"');
    expect(text).toContain('resolvConf: ""');
  });

  it("kube-proxy: node ports only on node IPs, health and metrics on loopback, no sysctls", () => {
    const text = kubeProxyConfig({
      kubeconfig: "/k",
      nodeName: "ring0-real-0",
      healthzPort: 1,
      metricsPort: 2,
    });
    expect(text).toContain('nodePortAddresses: ["10.244.0.0/16"]');
    expect(text).toContain("localhostNodePorts: false");
    expect(text).toContain("healthzBindAddress: 127.0.0.1:1");
    expect(text).toContain("metricsBindAddress: 127.0.0.1:2");
    expect(text).toContain("maxPerCore: 0");
  });

  it("the host's wall: pods reach the host only with replies, their API listeners and their DNS, and nothing beyond the pod network", () => {
    const [input, forward] = firewallRules();
    expect(input?.from).toBe("INPUT");
    expect(input?.rules.at(-1)).toEqual(["-j", "DROP"]);
    expect(input?.rules[0]).toContain("ESTABLISHED,RELATED");
    // Only sockets bound to exactly the tenants' API address (the socket match skips wildcard ones).
    expect(input?.rules[1]).toEqual(["-d", "10.244.255.1/32", "-p", "tcp", "-m", "socket", "-j", "ACCEPT"]);
    expect(input?.rules[2]).toEqual(["-d", "10.244.255.1/32", "-p", "udp", "-m", "socket", "-j", "ACCEPT"]);
    // Then the tenant wall's rules for a vn-agent pod to its own node's kubelet, nothing else.
    expect(input?.rules[3]).toEqual(["-j", "RING0-NODE-AGENTS"]);
    expect(input?.rules).toHaveLength(5);
    expect(forward?.from).toBe("FORWARD");
    expect(forward?.rules).toEqual([
      ["-d", "10.244.0.0/16", "-j", "RING0-TENANTS"],
      ["-d", "10.244.0.0/16", "-j", "RETURN"],
      ["-j", "DROP"],
    ]);
    // Until the tenant wall writes its chain, replies pass and every new connection between pods drops.
    expect(UNWRITTEN_TENANTS_RULES.at(-1)).toEqual(["-j", "DROP"]);
    expect(UNWRITTEN_TENANTS_RULES[0]).toContain("ESTABLISHED,RELATED");
    // The tenant wall's chain is declared apart (a declared chain is flushed by iptables-restore).
    const text = firewallRestoreText();
    expect(text.startsWith("*mangle\n")).toBe(true);
    expect(text).not.toContain(":RING0-TENANTS");
    expect(text).not.toContain(":RING0-NODE-AGENTS");
    expect(text).toContain("-A RING0-PODS-FORWARD -d 10.244.0.0/16 -j RING0-TENANTS");
    // IPv6 (pods have link-local addresses only): replies in, nothing else in or through.
    const [input6, forward6] = firewallRules("ipv6");
    expect(input6?.rules).toEqual([
      ["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
      ["-j", "DROP"],
    ]);
    expect(forward6?.rules).toEqual([["-j", "DROP"]]);
  });
});
