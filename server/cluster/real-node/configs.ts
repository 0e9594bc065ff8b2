/**
 * The configuration files of a real node (pure): containerd's, the bridge CNI network, the kubelet's
 * KubeletConfiguration and kubeconfig, and kube-proxy's. What each setting is for, and why this host
 * needs it, is in ../../../../shared/notes/real-node.md and docs/architecture.md ("Real nodes").
 */
import { PAUSE_IMAGE, POD_NETWORK, type RealNodePlan, SERVICE_NETWORK } from "./plan";

const toml = (value: string) => JSON.stringify(value);

/** Where Debian's packages put runc and the CNI plugins. */
export const RUNC_PATH = "/usr/sbin/runc";
export const CNI_BIN_DIR = "/usr/lib/cni";

/** The sandboxed runtime's handler (CRI runtime name) and the super cluster's RuntimeClass for it. */
export const SANDBOX_HANDLER = "runsc";
/** The node label of real nodes that run the sandbox (the RuntimeClass schedules onto them only). */
export const SANDBOX_NODE_LABEL = "ring0.dev/sandbox";

/**
 * containerd 2's config (version 3): CRI with runc on cgroupfs, the node's own dirs, no TCP; with
 * gVisor's binaries (`sandboxBinDir`), also the `runsc` runtime (./runscConfig).
 */
export function containerdConfig(plan: RealNodePlan, sandboxBinDir?: string): string {
  const { paths } = plan;
  return [
    "# Written by Ring0 (server/cluster/real-node); edits are overwritten.",
    "version = 3",
    `root = ${toml(paths.containerdRoot)}`,
    `state = ${toml(paths.containerdState)}`,
    "[grpc]",
    `  address = ${toml(paths.containerdSocket)}`,
    "[ttrpc]",
    `  address = ${toml(`${paths.containerdSocket}.ttrpc`)}`,
    "[debug]",
    '  address = ""',
    "[metrics]",
    '  address = ""',
    '[plugins."io.containerd.cri.v1.images"]',
    '  snapshotter = "overlayfs"',
    '  [plugins."io.containerd.cri.v1.images".pinned_images]',
    `    sandbox = ${toml(PAUSE_IMAGE)}`,
    // Where each registry host's hosts.toml sends pulls: Ring0's registry, never the internet.
    '  [plugins."io.containerd.cri.v1.images".registry]',
    `    config_path = ${toml(paths.registryHosts)}`,
    '[plugins."io.containerd.cri.v1.runtime"]',
    "  enable_selinux = false",
    "  disable_apparmor = true",
    // No CAP_SYS_RESOURCE on this machine kind: CRI may not lower oom_score_adj below containerd's own.
    "  restrict_oom_score_adj = true",
    // Pod network namespaces under the node's state dir, not /var/run/netns.
    "  netns_mounts_under_state_dir = true",
    '  [plugins."io.containerd.cri.v1.runtime".containerd]',
    '    default_runtime_name = "runc"',
    '    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]',
    '      runtime_type = "io.containerd.runc.v2"',
    '      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]',
    `        BinaryName = ${toml(RUNC_PATH)}`,
    `        Root = ${toml(paths.runcRoot)}`,
    "        SystemdCgroup = false",
    ...(sandboxBinDir
      ? [
          `    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.${SANDBOX_HANDLER}]`,
          '      runtime_type = "io.containerd.runsc.v1"',
          `      runtime_path = ${toml(`${sandboxBinDir}/containerd-shim-runsc-v1`)}`,
          `      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.${SANDBOX_HANDLER}.options]`,
          '        TypeUrl = "io.containerd.runsc.v1.options"',
          `        ConfigPath = ${toml(plan.paths.runscConfig)}`,
        ]
      : []),
    '  [plugins."io.containerd.cri.v1.runtime".cni]',
    `    bin_dirs = [${toml(CNI_BIN_DIR)}]`,
    `    conf_dir = ${toml(paths.cniConfDir)}`,
    "    max_conf_num = 1",
    '[plugins."io.containerd.grpc.v1.cri"]',
    "  disable_tcp_service = true",
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    "",
  ].join("\n");
}

/**
 * gVisor's shim config: runsc from Ring0's build, its state under the node's run dir, the systrap
 * platform (KVM guests do not run on this machine kind, and systrap needs no device), and its logs
 * beside the node's.
 */
export function runscConfig(plan: RealNodePlan, sandboxBinDir: string): string {
  return [
    "# Written by Ring0 (server/cluster/real-node); edits are overwritten.",
    `binary_name = ${toml(`${sandboxBinDir}/runsc`)}`,
    `root = ${toml(plan.paths.runscRoot)}`,
    "[runsc_config]",
    '  platform = "systrap"',
    "",
  ].join("\n");
}

/**
 * The bridge network of the node's pods. Pods get routes to the pod network and the Services' range
 * only, no default route: nothing outside this host's pods and Services is reachable from a pod
 * (and ./host-firewall.ts drops what a pod would send to the host itself or beyond).
 */
export function cniConflist(plan: RealNodePlan): string {
  return `${JSON.stringify(
    {
      cniVersion: "0.4.0",
      name: `ring0-${plan.name}`,
      plugins: [
        {
          type: "bridge",
          bridge: plan.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            dataDir: plan.paths.cniIpamDir,
            ranges: [[{ subnet: plan.subnet, gateway: plan.nodeIp }]],
            routes: [{ dst: POD_NETWORK }, { dst: SERVICE_NETWORK }],
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

export interface KubeconfigFiles {
  server: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  user: string;
}

export function kubeconfigYaml(files: KubeconfigFiles): string {
  const q = JSON.stringify;
  return [
    "# Written by Ring0 (server/cluster/real-node).",
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "  - name: super",
    "    cluster:",
    `      server: ${q(files.server)}`,
    `      certificate-authority: ${q(files.caFile)}`,
    "users:",
    `  - name: ${q(files.user)}`,
    "    user:",
    `      client-certificate: ${q(files.certFile)}`,
    `      client-key: ${q(files.keyFile)}`,
    "contexts:",
    "  - name: super",
    "    context:",
    "      cluster: super",
    `      user: ${q(files.user)}`,
    "current-context: super",
    "",
  ].join("\n");
}

export interface KubeletFiles {
  /** CA of the only clients the kubelet accepts (kube-apiserver's and the vn-agents' certificates). */
  clientCaFile: string;
  tlsCertFile: string;
  tlsKeyFile: string;
  healthzPort: number;
}

/**
 * The KubeletConfiguration: serving on the node IP with client certificates and webhook
 * authorization only, cgroupfs under the node's own cgroupRoot, cgroup v1 accepted (this machine
 * kind has no v2 hierarchy with controllers), imported images never garbage-collected (nothing can
 * pull them back), no host DNS handed to pods.
 */
export function kubeletConfig(plan: RealNodePlan, files: KubeletFiles): string {
  const q = JSON.stringify;
  const { paths } = plan;
  return [
    "# Written by Ring0 (server/cluster/real-node); edits are overwritten.",
    "apiVersion: kubelet.config.k8s.io/v1beta1",
    "kind: KubeletConfiguration",
    `address: ${plan.nodeIp}`,
    "port: 10250",
    "readOnlyPort: 0",
    "healthzBindAddress: 127.0.0.1",
    `healthzPort: ${files.healthzPort}`,
    `tlsCertFile: ${q(files.tlsCertFile)}`,
    `tlsPrivateKeyFile: ${q(files.tlsKeyFile)}`,
    "rotateCertificates: false",
    "serverTLSBootstrap: false",
    "authentication:",
    "  anonymous: {enabled: false}",
    "  webhook: {enabled: true}",
    `  x509: {clientCAFile: ${q(files.clientCaFile)}}`,
    "authorization: {mode: Webhook}",
    "cgroupDriver: cgroupfs",
    `cgroupRoot: ${q(plan.cgroupRoot)}`,
    "cgroupsPerQOS: true",
    "enforceNodeAllocatable: []",
    "failCgroupV1: false",
    "failSwapOn: false",
    `containerRuntimeEndpoint: ${q(`unix://${paths.containerdSocket}`)}`,
    `imageServiceEndpoint: ${q(`unix://${paths.containerdSocket}`)}`,
    `staticPodPath: ${q(paths.staticPods)}`,
    `podLogsDir: ${q(paths.podLogs)}`,
    "clusterDomain: cluster.local",
    'resolvConf: ""',
    "maxPods: 110",
    "evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}",
    "imageGCHighThresholdPercent: 100",
    "imageGCLowThresholdPercent: 99",
    "serializeImagePulls: false",
    "makeIPTablesUtilChains: false",
    "",
  ].join("\n");
}

export interface KubeProxyFiles {
  kubeconfig: string;
  nodeName: string;
  healthzPort: number;
  metricsPort: number;
}

/**
 * kube-proxy in iptables mode for the host's real nodes: node ports only on node IPs (never on the
 * host's own network or loopback, so no route_localnet), and no conntrack sysctls changed.
 */
export function kubeProxyConfig(files: KubeProxyFiles): string {
  const q = JSON.stringify;
  return [
    "# Written by Ring0 (server/cluster/real-node); edits are overwritten.",
    "apiVersion: kubeproxy.config.k8s.io/v1alpha1",
    "kind: KubeProxyConfiguration",
    "clientConnection:",
    `  kubeconfig: ${q(files.kubeconfig)}`,
    `hostnameOverride: ${q(files.nodeName)}`,
    `healthzBindAddress: 127.0.0.1:${files.healthzPort}`,
    `metricsBindAddress: 127.0.0.1:${files.metricsPort}`,
    "mode: iptables",
    `clusterCIDR: ${POD_NETWORK}`,
    "detectLocalMode: ClusterCIDR",
    `nodePortAddresses: [${q(POD_NETWORK)}]`,
    "iptables:",
    "  localhostNodePorts: false",
    "  masqueradeAll: false",
    "conntrack:",
    "  maxPerCore: 0",
    "  min: 0",
    "  tcpEstablishedTimeout: 0s",
    "  tcpCloseWaitTimeout: 0s",
    "oomScoreAdj: 0",
    "",
  ].join("\n");
}

/** The registry's config (distribution v3): loopback only, files on this host's disk, no debug listener. */
export function registryConfig(options: {
  port: number;
  storage: string;
  secret: string;
  htpasswd: string;
}): string {
  return [
    "# Written by Ring0 (server/cluster/real-node/registry.ts); edits are overwritten.",
    "version: 0.1",
    "log:",
    "  level: warn",
    "  formatter: text",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${JSON.stringify(options.storage)}`,
    // Nothing is deleted through the API (no one on this host can take an image from the nodes).
    "  delete:",
    "    enabled: false",
    "  redirect:",
    "    disable: true",
    // Every request authenticates: nothing else on this host reads or changes the nodes' images.
    "auth:",
    "  htpasswd:",
    "    realm: ring0",
    `    path: ${JSON.stringify(options.htpasswd)}`,
    "http:",
    `  addr: 127.0.0.1:${options.port}`,
    // Signs upload state; fixed per host so an upload survives a registry restart.
    `  secret: ${JSON.stringify(options.secret)}`,
    "  headers:",
    "    X-Content-Type-Options: [nosniff]",
    "",
  ].join("\n");
}

/**
 * A registry host's repositories in Ring0's registry: under the host's own name (a port becomes
 * "-port"), so docker.io/library/nginx and quay.io/library/nginx stay apart. The same mapping as
 * ring0-image push's ImageRef.Repository (tools/kube/kwok/image/push.go).
 */
export function registryRepositoryHost(host: string): string {
  return host.replaceAll(":", "-");
}

/** containerd's directory name for a registry host (its hostDirectory: "host:port" → "host_port_"). */
export function containerdHostDir(host: string): string {
  const colon = host.lastIndexOf(":");
  return colon > 0 ? `${host.slice(0, colon)}_${host.slice(colon + 1)}_` : host;
}

/** A registry host name Ring0 writes a hosts.toml for: a DNS name or IPv4 address, maybe a port. */
export const REGISTRY_HOST_PATTERN =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::\d{1,5})?$/;

/**
 * containerd's hosts.toml for one registry host (or "_default", every host without its own): the
 * only server is Ring0's registry, at the host's own repository prefix (override_path: the URL is
 * the API root). With no [host] entries and this server, containerd never falls back to the
 * internet; pull and resolve only (nothing is pushed from a node), with Ring0's credentials as a
 * header (the file is root-only, like the directory it is in).
 */
export function registryHostsToml(port: number, host: string, authorization: string): string {
  const prefix = host === "_default" ? "ring0-unlisted-host" : registryRepositoryHost(host);
  if (host !== "_default" && !REGISTRY_HOST_PATTERN.test(host)) throw new Error(`bad registry host ${host}`);
  return [
    `# Written by Ring0: pulls from ${host === "_default" ? "any other registry host" : host} come from Ring0's local registry only.`,
    `server = ${toml(`http://127.0.0.1:${port}/v2/${prefix}`)}`,
    "override_path = true",
    'capabilities = ["pull", "resolve"]',
    "[header]",
    `  Authorization = ${toml(authorization)}`,
    "",
  ].join("\n");
}
