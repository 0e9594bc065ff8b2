/**
 * Where a real node of the local super cluster lives and what it is called (pure). Real node i is
 * this host running a kubelet and a containerd of its own:
 *   name        ring0-real-<i>
 *   node IP     10.244.<i>.1, the gateway of its pod bridge ring0br<i> (so the kubelet serves on an
 *               address of this host that is neither loopback nor the host's own network)
 *   pod subnet  10.244.<i>.0/24 (bridge CNI, host-local IPAM)
 *   cgroups     /ring0/<name> in every hierarchy (the kubelet's cgroupRoot), so cluster:down
 *               removes exactly what the node made
 * Files under <stateDir>/real-nodes/<name>/; kube-proxy (one per host: it programs the host's
 * iptables) under <stateDir>/real-nodes/kube-proxy/. The image registry every real node pulls from
 * (one per host too) under <stateDir>/registry/: its images outlive cluster:down.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { indexedNames } from "../indexed-name";

export const REAL_NODE_PREFIX = "ring0-real-";
/** Label the kubelet gives its own Node (Ring0's real nodes are listed by it). */
export const REAL_NODE_LABEL = "ring0.dev/real-node";
/** Taint on every simulated (kwok) node while real nodes exist: tenant pods land on real ones. */
export const SIMULATED_TAINT_KEY = "ring0.dev/simulated";
/** Every real node's pods, and what kube-proxy treats as the cluster's pod network. */
export const POD_NETWORK = "10.244.0.0/16";
/**
 * Where tenants' pods on real nodes reach their own API servers (issue 18): an address of this host
 * (on `lo`), outside every node's pod subnet, where Ring0 listens for each tenant on its API
 * server's port. The host's wall lets pods reach only sockets bound to exactly this address
 * (host-firewall.ts), and each listener only its own tenant's pods (provisioners/local/pod-api.ts).
 */
export const POD_API_ADDRESS = "10.244.255.1";
/** kube-apiserver's default service range (kwokctl sets none), where Services' cluster IPs come from. */
export const SERVICE_NETWORK = "10.0.0.0/24";
/** The super cluster's `kubernetes` Service: the first address of the service network. */
export const KUBERNETES_SERVICE_ADDRESS = SERVICE_NETWORK.replace(/\.0\/\d+$/, ".1");
/** The kubelet's port on its node IP. */
export const KUBELET_PORT = 10250;
/** The most real nodes one host runs (each is a kubelet, a containerd and a bridge). */
export const MAX_REAL_NODES = 8;
/** Images every real node has from the start (built by ring0-image, imported with ctr). */
export const PAUSE_IMAGE = "localhost/ring0/pause:1";
export const TOOLBOX_IMAGE = "localhost/ring0/toolbox:1";
export const HTTPD_IMAGE = "localhost/ring0/httpd:1";
/** The toolbox with Ring0's kubectl (for in-cluster clients of a tenant's own API server). */
export const KUBECTL_IMAGE = "localhost/ring0/kubectl:1";

export interface RealNodePlan {
  index: number;
  name: string;
  nodeIp: string;
  subnet: string;
  bridge: string;
  /**
   * The bridge's own MAC address, set when it is made. A bridge without one takes the lowest MAC
   * of its ports and changes it whenever that port goes: every pod's cached gateway address is then
   * wrong until its neighbour entry expires, and pods lose their gateway (DNS, their API server,
   * Services) for half a minute each time a pod is deleted.
   */
  bridgeMac: string;
  /** The kubelet's cgroupRoot. */
  cgroupRoot: string;
  dir: string;
  /**
   * The node's runtime state, under /run (memory, gone with the host), never under the state dir:
   * containerd keeps pod network namespaces there as bind mounts that cannot even be read, and
   * anything walking the project (a production build's file tracing) failed on them.
   */
  runtimeDir: string;
  paths: {
    containerdConfig: string;
    containerdRoot: string;
    containerdState: string;
    containerdSocket: string;
    runcRoot: string;
    /** gVisor's shim config (runsc's binary, root and flags), and runsc's state dir. */
    runscConfig: string;
    runscRoot: string;
    cniConfDir: string;
    cniIpamDir: string;
    kubeletRoot: string;
    kubeletConfig: string;
    kubeletKubeconfig: string;
    kubeletPki: string;
    staticPods: string;
    podLogs: string;
    logs: string;
    /** containerd's registry hosts dir (config_path): every registry host resolves to Ring0's registry. */
    registryHosts: string;
    /** The daemons' records ({ pid, … }, ../daemon.ts). */
    containerdRecord: string;
    kubeletRecord: string;
  };
}

const realNames = indexedNames(REAL_NODE_PREFIX);
export const realNodeName = realNames.name;
/** Index of a node named by realNodeName, or undefined. */
export const realNodeIndex = realNames.index;

/** The node IP Ring0 gives real node `index`: the gateway of its pod bridge. */
export function realNodeIp(index: number): string {
  return `10.244.${index}.1`;
}

/** Real node `index`'s bridge MAC: locally administered, unicast, one per index. */
export function realNodeBridgeMac(index: number): string {
  return `02:52:30:00:00:${index.toString(16).padStart(2, "0")}`;
}

/** Where real nodes keep runtime state (see RealNodePlan.runtimeDir). */
export const RUNTIME_ROOT = "/run/ring0/nodes";

export function realNodesDir(stateDir: string): string {
  return path.join(path.resolve(stateDir), "real-nodes");
}

/**
 * Where `./ring0 install` (Ring0 installed by its chart into the local world) keeps its credentials,
 * the kubelet CA it hands the chart, and its node agent's log and pid (scripts/node-agent.ts).
 */
export function inClusterDir(stateDir: string): string {
  return path.join(path.resolve(stateDir), "in-cluster");
}

/** The pid of the node agent that plays the node's part for Ring0 installed in the local world. */
export function nodeAgentPidFile(stateDir: string): string {
  return path.join(inClusterDir(stateDir), "node-agent.pid");
}

export function realNodePlan(stateDir: string, index: number): RealNodePlan {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_REAL_NODES) {
    throw new Error(`real node index ${index} is out of range 0…${MAX_REAL_NODES - 1}`);
  }
  const name = realNodeName(index);
  const dir = path.join(realNodesDir(stateDir), name);
  const run = path.join(dir, "run");
  // One per node of this state dir (two checkouts' worlds never share one).
  const runtimeDir = path.join(
    RUNTIME_ROOT,
    `${name}-${createHash("sha256").update(dir).digest("hex").slice(0, 12)}`,
  );
  return {
    index,
    name,
    nodeIp: realNodeIp(index),
    subnet: `10.244.${index}.0/24`,
    bridge: `ring0br${index}`,
    bridgeMac: realNodeBridgeMac(index),
    cgroupRoot: `/ring0/${name}`,
    dir,
    runtimeDir,
    paths: {
      containerdConfig: path.join(dir, "containerd", "config.toml"),
      containerdRoot: path.join(dir, "containerd", "root"),
      containerdState: path.join(runtimeDir, "containerd"),
      containerdSocket: path.join(run, "containerd.sock"),
      runcRoot: path.join(run, "runc"),
      runscConfig: path.join(dir, "containerd", "runsc.toml"),
      runscRoot: path.join(run, "runsc"),
      cniConfDir: path.join(dir, "cni", "conf"),
      cniIpamDir: path.join(dir, "cni", "ipam"),
      kubeletRoot: path.join(dir, "kubelet", "root"),
      kubeletConfig: path.join(dir, "kubelet", "config.yaml"),
      kubeletKubeconfig: path.join(dir, "kubelet", "kubeconfig"),
      kubeletPki: path.join(dir, "kubelet", "pki"),
      staticPods: path.join(dir, "kubelet", "static-pods"),
      podLogs: path.join(dir, "kubelet", "pod-logs"),
      logs: path.join(dir, "logs"),
      registryHosts: registryPlan(stateDir).hostsDir,
      containerdRecord: path.join(dir, "containerd.json"),
      kubeletRecord: path.join(dir, "kubelet.json"),
    },
  };
}

/** The registry's files: config (with its port), storage (the images), containerd's hosts dir. */
export interface RegistryPlan {
  dir: string;
  config: string;
  /** "ring0:<password>", root-only: what every request to the registry authenticates with. */
  credentials: string;
  /** The registry's bcrypt of it. */
  htpasswd: string;
  storage: string;
  hostsDir: string;
  record: string;
  logs: string;
}

export function registryPlan(stateDir: string): RegistryPlan {
  const dir = path.join(path.resolve(stateDir), "registry");
  return {
    dir,
    config: path.join(dir, "config.yml"),
    credentials: path.join(dir, "credentials"),
    htpasswd: path.join(dir, "htpasswd"),
    storage: path.join(dir, "storage"),
    hostsDir: path.join(dir, "hosts.d"),
    record: path.join(dir, "registry.json"),
    logs: path.join(dir, "logs"),
  };
}

/**
 * Registry hosts whose images Ring0's registry serves from the start of every real node (any other
 * host gets its hosts.toml when an image of it is pushed; until then a pull of it fails here).
 */
export const MIRRORED_REGISTRY_HOSTS = [
  "docker.io",
  "registry.k8s.io",
  "quay.io",
  "ghcr.io",
  "gcr.io",
  "mcr.microsoft.com",
  "public.ecr.aws",
  "localhost",
] as const;

export interface KubeProxyPlan {
  dir: string;
  /** Its daemon record ({ pid, … }). */
  record: string;
  config: string;
  kubeconfig: string;
  pki: string;
  logs: string;
}

export function kubeProxyPlan(stateDir: string): KubeProxyPlan {
  const dir = path.join(realNodesDir(stateDir), "kube-proxy");
  return {
    dir,
    record: path.join(dir, "kube-proxy.json"),
    config: path.join(dir, "config.yaml"),
    kubeconfig: path.join(dir, "kubeconfig"),
    pki: path.join(dir, "pki"),
    logs: path.join(dir, "logs"),
  };
}

/** kube-router's files (one per host, NetworkPolicies: ./network-policy.ts), beside kube-proxy's. */
export function networkPolicyPlan(stateDir: string): Omit<KubeProxyPlan, "config"> {
  const dir = path.join(realNodesDir(stateDir), "kube-router");
  return {
    dir,
    kubeconfig: path.join(dir, "kubeconfig"),
    pki: path.join(dir, "pki"),
    logs: path.join(dir, "logs"),
    record: path.join(dir, "kube-router.json"),
  };
}
