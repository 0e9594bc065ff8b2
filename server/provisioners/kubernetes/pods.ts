/**
 * What every control-plane pod shares: the options the manifests are rendered from, the replicas
 * per component (suspended or not), the restricted security contexts, the PKI volume and the pod
 * template whose PKI checksum annotation rolls pods onto new certificates.
 */
import { goRuntimeEnv } from "../go-runtime";
import { type ControlPlaneAddresses, labels, PKI_SECRET } from "./naming";
import { pkiChecksum } from "./secrets";

const PKI_CHECKSUM_ANNOTATION = "ring0.dev/pki-checksum";
export const PKI_DIR = "/etc/kubernetes/pki";
/** The nonroot user of the distroless Kubernetes images. */
const RUN_AS = 65532;

/**
 * Where etcd keeps its data. A PersistentVolumeClaim is what a real super cluster wants. The local
 * super cluster's kwok nodes have no storage (no provisioner, no volumes: a claim would stay
 * Pending and the pod unschedulable), so there the data lives in an emptyDir, which lasts only as
 * long as the etcd pod — and a suspended control plane therefore keeps its etcd pod running.
 */
export type EtcdStorage =
  | { kind: "emptyDir" }
  | { kind: "persistentVolumeClaim"; size: string; storageClassName?: string };

export interface ControlPlaneImages {
  /** Registry of the Kubernetes images (registry.k8s.io). */
  registry: string;
  /** etcd image tag, e.g. "3.6.8-0". */
  etcdTag: string;
}

export const defaultImages: ControlPlaneImages = { registry: "registry.k8s.io", etcdTag: "3.6.8-0" };

/** What the manifests need beyond the spec. */
export interface ControlPlaneManifestOptions {
  tenant: string;
  /** Exact Kubernetes version ("1.36.4"), already resolved. */
  version: string;
  suspended: boolean;
  images: ControlPlaneImages;
  etcdStorage: EtcdStorage;
  clusterDomain: string;
  /** The cluster IPs of the control plane's Services (./services.ts), applied before the workloads. */
  addresses: ControlPlaneAddresses;
  /**
   * The API server reaches kubelets through Ring0's vn-agents with the client certificate in
   * KUBELET_CLIENT_SECRET (only its Hostname address: the vn-agents' host).
   */
  kubeletClient?: boolean;
  /** KUBELET_CLIENT_SECRET holds the kubeconfig of Ring0's authorization webhook: Node,RBAC,Webhook. */
  authorizationWebhook?: boolean;
  /**
   * What the Secrets the pods mount hold (Secret name → key → content). Each pod template is
   * annotated with a checksum of exactly what it mounts of them, so a component restarts onto its
   * own new certificates and no other restarts with it (etcd is not rolled for an API server's).
   */
  secretFiles: Record<string, Record<string, string>>;
  /** GOGC of every component (../go-runtime.ts); Go's default when undefined. */
  goGc?: number;
}

/** A container's environment: Ring0's Go runtime settings after its own variables. */
export function containerEnv(options: ControlPlaneManifestOptions, own: object[] = []): object[] {
  return [...own, ...Object.entries(goRuntimeEnv(options.goGc)).map(([name, value]) => ({ name, value }))];
}

/** Replicas per component: everything at 0 when suspended, except an etcd whose data is an emptyDir. */
export function controlPlaneReplicas(
  suspended: boolean,
  etcdStorage: EtcdStorage,
): { etcd: number; apiserver: number; controllerManager: number } {
  if (!suspended) return { etcd: 1, apiserver: 1, controllerManager: 1 };
  return { etcd: etcdStorage.kind === "emptyDir" ? 1 : 0, apiserver: 0, controllerManager: 0 };
}

const podSecurityContext = {
  runAsNonRoot: true,
  runAsUser: RUN_AS,
  runAsGroup: RUN_AS,
  fsGroup: RUN_AS,
  seccompProfile: { type: "RuntimeDefault" },
};

export const containerSecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
};

export function pkiVolume(files: string[]) {
  return {
    name: "pki",
    secret: {
      secretName: PKI_SECRET,
      defaultMode: 0o440,
      items: files.map((file) => ({ key: file, path: file })),
    },
  };
}

export function podSpec(containers: unknown[], volumes: unknown[]) {
  return {
    // The control plane never talks to the super cluster's API.
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    securityContext: podSecurityContext,
    containers,
    volumes,
  };
}

/**
 * An HTTPS health probe. Readiness is asked every 2 s (a cheap GET): a new or restarted pod serves
 * as soon as it can, not up to a period later; liveness every 10 s.
 */
export function httpsProbe(path: string, port: number, failureThreshold: number, periodSeconds = 10) {
  return { httpGet: { path, port, scheme: "HTTPS" }, periodSeconds, timeoutSeconds: 5, failureThreshold };
}

/** How often readiness is asked (see httpsProbe), and how many misses make a pod unready. */
export const READINESS_PERIOD_SECONDS = 2;
export const READINESS_FAILURES = 5;

/** The Secret files a pod spec mounts (pure): "<secret>/<key>" → content, from `secretFiles`. */
export function mountedSecretFiles(
  spec: { volumes?: unknown[] },
  secretFiles: Record<string, Record<string, string>>,
): Record<string, string> {
  const mounted: Record<string, string> = {};
  for (const volume of spec.volumes ?? []) {
    const secret = (volume as { secret?: { secretName?: string; items?: { key: string }[] } }).secret;
    if (!secret?.secretName) continue;
    const held = secretFiles[secret.secretName] ?? {};
    const keys = secret.items ? secret.items.map((item) => item.key) : Object.keys(held);
    for (const key of keys) mounted[`${secret.secretName}/${key}`] = held[key] ?? "";
  }
  return mounted;
}

export function podTemplate(
  options: ControlPlaneManifestOptions,
  name: string,
  spec: { volumes?: unknown[]; [field: string]: unknown },
) {
  return {
    metadata: {
      labels: labels(options.tenant, name),
      annotations: { [PKI_CHECKSUM_ANNOTATION]: pkiChecksum(mountedSecretFiles(spec, options.secretFiles)) },
    },
    spec,
  };
}
