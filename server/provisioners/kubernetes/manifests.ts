/**
 * The objects of a tenant control plane that runs as pods in the super cluster, as pure functions of
 * the spec: a namespace per tenant; etcd as a one-replica StatefulSet behind a headless Service;
 * kube-apiserver and kube-controller-manager as Deployments; the PKI and kubeconfigs as Secrets.
 * ./provisioner.ts applies them; the unit tests read them.
 */
import { createHash } from "node:crypto";
import { authenticationConfiguration } from "@/server/cluster/hardening";
import type { KubeObject } from "@/server/k8s/apply";
import { type ControlPlanePki, type PkiNames, pkiFiles } from "../pki";

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const TENANT_LABEL = "ring0.dev/tenant";
/** Marks a namespace as holding a tenant control plane (other Ring0 namespaces may carry the tenant label). */
export const CONTROL_PLANE_LABEL = "ring0.dev/control-plane";
const NAME_LABEL = "app.kubernetes.io/name";
const PKI_CHECKSUM_ANNOTATION = "ring0.dev/pki-checksum";

export const NAMESPACE_PREFIX = "ring0-cp-";
export const APISERVER_NAME = "kube-apiserver";
export const CONTROLLER_MANAGER_NAME = "kube-controller-manager";
export const ETCD_NAME = "etcd";
export const PKI_SECRET = "control-plane-pki";
export const KUBECONFIG_SECRET = "control-plane-kubeconfigs";
export const APISERVER_PORT = 6443;

/** The tenant cluster's own Service range (inside the tenant, not the super cluster's). */
const TENANT_SERVICE_CIDR = "10.96.0.0/16";
const TENANT_KUBERNETES_SERVICE_IP = "10.96.0.1";
const PKI_DIR = "/etc/kubernetes/pki";
const KUBECONFIG_DIR = "/etc/kubernetes/kubeconfig";
const ETCD_DATA_DIR = "/var/lib/etcd";
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
  /** Changes whenever the PKI does, so pods restart onto new certificates. */
  pkiChecksum: string;
}

/**
 * The namespace of a tenant's control plane: `ring0-cp-<tenant>`, or, for a tenant name too long for
 * a 63-character namespace, a prefix of it plus a hash (the tenant label carries the full name).
 */
export function controlPlaneNamespace(tenant: string): string {
  const plain = `${NAMESPACE_PREFIX}${tenant}`;
  if (plain.length <= 63) return plain;
  const hash = createHash("sha256").update(tenant).digest("hex").slice(0, 10);
  return `${plain.slice(0, 63 - hash.length - 1).replace(/-+$/, "")}-${hash}`;
}

/** The URL Ring0 uses for the tenant's API server: its Service's DNS name, ClusterIP-independent. */
export function controlPlaneEndpoint(tenant: string): string {
  return `https://${APISERVER_NAME}.${controlPlaneNamespace(tenant)}.svc:${APISERVER_PORT}`;
}

/** The names the PKI's serving certificates carry. */
export function controlPlanePkiNames(tenant: string, clusterDomain: string): PkiNames {
  const namespace = controlPlaneNamespace(tenant);
  const serviceNames = (service: string) => [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.${clusterDomain}`,
  ];
  return {
    tenant,
    apiserverDnsNames: [
      ...serviceNames(APISERVER_NAME),
      // How workloads inside the tenant cluster name their API server.
      "kubernetes",
      "kubernetes.default",
      "kubernetes.default.svc",
      `kubernetes.default.svc.${clusterDomain}`,
      "localhost",
    ],
    apiserverIpAddresses: ["127.0.0.1", TENANT_KUBERNETES_SERVICE_IP],
    etcdDnsNames: [
      ...serviceNames(ETCD_NAME),
      `${ETCD_NAME}-0.${ETCD_NAME}.${namespace}.svc`,
      `${ETCD_NAME}-0.${ETCD_NAME}.${namespace}.svc.${clusterDomain}`,
      "localhost",
    ],
    etcdIpAddresses: ["127.0.0.1"],
  };
}

function labels(tenant: string, name?: string): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: "ring0",
    [TENANT_LABEL]: tenant,
    "app.kubernetes.io/part-of": "ring0-control-plane",
    ...(name ? { [NAME_LABEL]: name, "app.kubernetes.io/component": "control-plane" } : {}),
  };
}

function selector(tenant: string, name: string): Record<string, string> {
  return { [NAME_LABEL]: name, [TENANT_LABEL]: tenant };
}

export function namespaceManifest(tenant: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: controlPlaneNamespace(tenant),
      labels: {
        ...labels(tenant),
        [CONTROL_PLANE_LABEL]: "kubernetes",
        // The control plane's pods need nothing privileged.
        "pod-security.kubernetes.io/enforce": "restricted",
      },
    },
  };
}

function base64(text: string): string {
  return Buffer.from(text).toString("base64");
}

export function pkiSecretManifest(tenant: string, files: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: PKI_SECRET, namespace: controlPlaneNamespace(tenant), labels: labels(tenant) },
    type: "Opaque",
    data: Object.fromEntries(Object.entries(files).map(([file, pem]) => [file, base64(pem)])),
  };
}

/** A kubeconfig with one cluster, one client-certificate user and one context. */
export function renderKubeconfig(input: {
  cluster: string;
  user: string;
  server: string;
  ca: string;
  cert: string;
  key: string;
}): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${input.cluster}`,
    "  cluster:",
    `    server: ${input.server}`,
    `    certificate-authority-data: ${base64(input.ca)}`,
    "users:",
    `- name: ${input.user}`,
    "  user:",
    `    client-certificate-data: ${base64(input.cert)}`,
    `    client-key-data: ${base64(input.key)}`,
    "contexts:",
    `- name: ${input.user}@${input.cluster}`,
    "  context:",
    `    cluster: ${input.cluster}`,
    `    user: ${input.user}`,
    `current-context: ${input.user}@${input.cluster}`,
    "",
  ].join("\n");
}

/** The controller manager's kubeconfig and Ring0's admin kubeconfig (both through the Service name). */
export function kubeconfigSecretManifest(tenant: string, pki: ControlPlanePki): KubeObject {
  const server = controlPlaneEndpoint(tenant);
  const controllerManager = renderKubeconfig({
    cluster: tenant,
    user: "system:kube-controller-manager",
    server,
    ca: pki.ca.cert,
    ...pki.controllerManager,
  });
  const admin = renderKubeconfig({
    cluster: tenant,
    user: "ring0-admin",
    server,
    ca: pki.ca.cert,
    ...pki.admin,
  });
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: KUBECONFIG_SECRET, namespace: controlPlaneNamespace(tenant), labels: labels(tenant) },
    type: "Opaque",
    data: { "controller-manager.conf": base64(controllerManager), "admin.conf": base64(admin) },
  };
}

/** A checksum of the PKI files, for the pod template annotation that rolls pods onto new certificates. */
export function pkiChecksum(files: Record<string, string>): string {
  const hash = createHash("sha256");
  for (const file of Object.keys(files).sort())
    hash
      .update(file)
      .update("\0")
      .update(files[file] ?? "");
  return hash.digest("hex").slice(0, 16);
}

const podSecurityContext = {
  runAsNonRoot: true,
  runAsUser: RUN_AS,
  runAsGroup: RUN_AS,
  fsGroup: RUN_AS,
  seccompProfile: { type: "RuntimeDefault" },
};

const containerSecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
};

function pkiVolume(files: string[]) {
  return {
    name: "pki",
    secret: {
      secretName: PKI_SECRET,
      defaultMode: 0o440,
      items: files.map((file) => ({ key: file, path: file })),
    },
  };
}

function podSpec(containers: unknown[], volumes: unknown[]) {
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
 * etcd's health over its own TLS client port with its own certificate (issued for client auth too),
 * since nothing of etcd listens in plain text where the kubelet could probe it.
 */
const etcdHealthProbe = {
  exec: {
    command: [
      "etcdctl",
      "--endpoints=https://127.0.0.1:2379",
      `--cacert=${PKI_DIR}/${pkiFiles.etcdCaCert}`,
      `--cert=${PKI_DIR}/${pkiFiles.etcdServerCert}`,
      `--key=${PKI_DIR}/${pkiFiles.etcdServerKey}`,
      "--command-timeout=4s",
      "endpoint",
      "health",
    ],
  },
  timeoutSeconds: 5,
};

/** The API server's AuthenticationConfiguration: anonymous requests only on its health endpoints. */
export const AUTHENTICATION_CONFIG_MAP = "apiserver-authentication";
const AUTHENTICATION_CONFIG_DIR = "/etc/kubernetes/authentication";

function httpsProbe(path: string, port: number, failureThreshold: number) {
  return { httpGet: { path, port, scheme: "HTTPS" }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold };
}

function podTemplate(options: ControlPlaneManifestOptions, name: string, spec: unknown) {
  return {
    metadata: {
      labels: labels(options.tenant, name),
      annotations: { [PKI_CHECKSUM_ANNOTATION]: options.pkiChecksum },
    },
    spec,
  };
}

/** Replicas per component: everything at 0 when suspended, except an etcd whose data is an emptyDir. */
export function controlPlaneReplicas(
  suspended: boolean,
  etcdStorage: EtcdStorage,
): { etcd: number; apiserver: number; controllerManager: number } {
  if (!suspended) return { etcd: 1, apiserver: 1, controllerManager: 1 };
  return { etcd: etcdStorage.kind === "emptyDir" ? 1 : 0, apiserver: 0, controllerManager: 0 };
}

export function etcdManifests(options: ControlPlaneManifestOptions): KubeObject[] {
  const namespace = controlPlaneNamespace(options.tenant);
  const { tenant, etcdStorage } = options;
  const replicas = controlPlaneReplicas(options.suspended, etcdStorage).etcd;
  const ownName = `${ETCD_NAME}-0.${ETCD_NAME}.${namespace}.svc`;
  const container = {
    name: ETCD_NAME,
    image: `${options.images.registry}/etcd:${options.images.etcdTag}`,
    imagePullPolicy: "IfNotPresent",
    command: ["etcd"],
    args: [
      `--name=${ETCD_NAME}-0`,
      `--data-dir=${ETCD_DATA_DIR}`,
      "--listen-client-urls=https://0.0.0.0:2379",
      `--advertise-client-urls=https://${ownName}:2379`,
      // One member: peers only ever on loopback.
      "--listen-peer-urls=http://127.0.0.1:2380",
      "--initial-advertise-peer-urls=http://127.0.0.1:2380",
      `--initial-cluster=${ETCD_NAME}-0=http://127.0.0.1:2380`,
      "--initial-cluster-state=new",
      // Metrics and health only inside the pod (nothing plain-text on the network); probes use TLS.
      "--listen-metrics-urls=http://127.0.0.1:2381",
      "--client-cert-auth=true",
      `--trusted-ca-file=${PKI_DIR}/${pkiFiles.etcdCaCert}`,
      `--cert-file=${PKI_DIR}/${pkiFiles.etcdServerCert}`,
      `--key-file=${PKI_DIR}/${pkiFiles.etcdServerKey}`,
      "--snapshot-count=10000",
    ],
    ports: [{ name: "client", containerPort: 2379 }],
    readinessProbe: { ...etcdHealthProbe, periodSeconds: 10, failureThreshold: 3 },
    livenessProbe: { ...etcdHealthProbe, periodSeconds: 10, failureThreshold: 8 },
    resources: { requests: { cpu: "100m", memory: "256Mi" } },
    securityContext: containerSecurityContext,
    volumeMounts: [
      { name: "data", mountPath: ETCD_DATA_DIR },
      { name: "pki", mountPath: PKI_DIR, readOnly: true },
    ],
  };
  const volumes: unknown[] = [
    pkiVolume([pkiFiles.etcdCaCert, pkiFiles.etcdServerCert, pkiFiles.etcdServerKey]),
  ];
  if (etcdStorage.kind === "emptyDir") volumes.push({ name: "data", emptyDir: {} });
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: ETCD_NAME, namespace, labels: labels(tenant, ETCD_NAME) },
      spec: {
        clusterIP: "None",
        // The API server must resolve etcd-0 before its readiness probe passes.
        publishNotReadyAddresses: true,
        selector: selector(tenant, ETCD_NAME),
        ports: [{ name: "client", port: 2379, targetPort: 2379 }],
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: ETCD_NAME, namespace, labels: labels(tenant, ETCD_NAME) },
      spec: {
        serviceName: ETCD_NAME,
        replicas,
        podManagementPolicy: "Parallel",
        selector: { matchLabels: selector(tenant, ETCD_NAME) },
        template: podTemplate(options, ETCD_NAME, podSpec([container], volumes)),
        ...(etcdStorage.kind === "persistentVolumeClaim"
          ? {
              persistentVolumeClaimRetentionPolicy: { whenScaled: "Retain", whenDeleted: "Retain" },
              volumeClaimTemplates: [
                {
                  apiVersion: "v1",
                  kind: "PersistentVolumeClaim",
                  metadata: { name: "data", labels: labels(tenant, ETCD_NAME) },
                  spec: {
                    accessModes: ["ReadWriteOnce"],
                    resources: { requests: { storage: etcdStorage.size } },
                    ...(etcdStorage.storageClassName
                      ? { storageClassName: etcdStorage.storageClassName }
                      : {}),
                  },
                },
              ],
            }
          : {}),
      },
    },
    {
      // Only the API server may reach etcd (enforced where the super cluster's CNI enforces policies).
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: `${ETCD_NAME}-clients`, namespace, labels: labels(tenant, ETCD_NAME) },
      spec: {
        podSelector: { matchLabels: selector(tenant, ETCD_NAME) },
        policyTypes: ["Ingress"],
        ingress: [
          {
            from: [{ podSelector: { matchLabels: selector(tenant, APISERVER_NAME) } }],
            ports: [{ port: 2379, protocol: "TCP" }],
          },
        ],
      },
    },
  ];
}

export function apiserverManifests(options: ControlPlaneManifestOptions): KubeObject[] {
  const namespace = controlPlaneNamespace(options.tenant);
  const { tenant } = options;
  const pki = (file: string) => `${PKI_DIR}/${file}`;
  const container = {
    name: APISERVER_NAME,
    image: `${options.images.registry}/kube-apiserver:v${options.version}`,
    imagePullPolicy: "IfNotPresent",
    command: ["kube-apiserver"],
    env: [{ name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }],
    args: [
      "--advertise-address=$(POD_IP)",
      `--secure-port=${APISERVER_PORT}`,
      `--etcd-servers=https://${ETCD_NAME}-0.${ETCD_NAME}.${namespace}.svc:2379`,
      `--etcd-cafile=${pki(pkiFiles.etcdCaCert)}`,
      `--etcd-certfile=${pki(pkiFiles.apiserverEtcdClientCert)}`,
      `--etcd-keyfile=${pki(pkiFiles.apiserverEtcdClientKey)}`,
      `--client-ca-file=${pki(pkiFiles.caCert)}`,
      `--tls-cert-file=${pki(pkiFiles.apiserverCert)}`,
      `--tls-private-key-file=${pki(pkiFiles.apiserverKey)}`,
      "--authorization-mode=Node,RBAC",
      "--enable-admission-plugins=NodeRestriction",
      "--allow-privileged=true",
      `--service-account-issuer=${controlPlaneEndpoint(tenant)}`,
      `--service-account-key-file=${pki(pkiFiles.serviceAccountPub)}`,
      `--service-account-signing-key-file=${pki(pkiFiles.serviceAccountKey)}`,
      `--service-cluster-ip-range=${TENANT_SERVICE_CIDR}`,
      `--authentication-config=${AUTHENTICATION_CONFIG_DIR}/authentication-config.yaml`,
      "--profiling=false",
    ],
    ports: [{ name: "https", containerPort: APISERVER_PORT }],
    readinessProbe: httpsProbe("/readyz", APISERVER_PORT, 3),
    livenessProbe: { ...httpsProbe("/livez", APISERVER_PORT, 8), initialDelaySeconds: 15 },
    resources: { requests: { cpu: "250m", memory: "512Mi" } },
    securityContext: containerSecurityContext,
    volumeMounts: [
      { name: "pki", mountPath: PKI_DIR, readOnly: true },
      { name: "authentication", mountPath: AUTHENTICATION_CONFIG_DIR, readOnly: true },
    ],
  };
  const volumes = [
    { name: "authentication", configMap: { name: AUTHENTICATION_CONFIG_MAP } },
    pkiVolume([
      pkiFiles.caCert,
      pkiFiles.apiserverCert,
      pkiFiles.apiserverKey,
      pkiFiles.serviceAccountKey,
      pkiFiles.serviceAccountPub,
      pkiFiles.etcdCaCert,
      pkiFiles.apiserverEtcdClientCert,
      pkiFiles.apiserverEtcdClientKey,
    ]),
  ];
  return [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: AUTHENTICATION_CONFIG_MAP, namespace, labels: labels(tenant, APISERVER_NAME) },
      data: { "authentication-config.yaml": authenticationConfiguration() },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: APISERVER_NAME, namespace, labels: labels(tenant, APISERVER_NAME) },
      spec: {
        type: "ClusterIP",
        selector: selector(tenant, APISERVER_NAME),
        ports: [{ name: "https", port: APISERVER_PORT, targetPort: APISERVER_PORT }],
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: APISERVER_NAME, namespace, labels: labels(tenant, APISERVER_NAME) },
      spec: {
        replicas: controlPlaneReplicas(options.suspended, options.etcdStorage).apiserver,
        selector: { matchLabels: selector(tenant, APISERVER_NAME) },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
        template: podTemplate(options, APISERVER_NAME, podSpec([container], volumes)),
      },
    },
  ];
}

export function controllerManagerManifests(options: ControlPlaneManifestOptions): KubeObject[] {
  const namespace = controlPlaneNamespace(options.tenant);
  const { tenant } = options;
  const kubeconfig = `${KUBECONFIG_DIR}/controller-manager.conf`;
  const container = {
    name: CONTROLLER_MANAGER_NAME,
    image: `${options.images.registry}/kube-controller-manager:v${options.version}`,
    imagePullPolicy: "IfNotPresent",
    command: ["kube-controller-manager"],
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      "--bind-address=0.0.0.0",
      "--secure-port=10257",
      "--leader-elect=true",
      "--use-service-account-credentials=true",
      "--controllers=*,bootstrapsigner,tokencleaner",
      `--cluster-name=${tenant}`,
      `--root-ca-file=${PKI_DIR}/${pkiFiles.caCert}`,
      `--service-account-private-key-file=${PKI_DIR}/${pkiFiles.serviceAccountKey}`,
      `--cluster-signing-cert-file=${PKI_DIR}/${pkiFiles.caCert}`,
      `--cluster-signing-key-file=${PKI_DIR}/${pkiFiles.caKey}`,
      `--service-cluster-ip-range=${TENANT_SERVICE_CIDR}`,
      "--profiling=false",
    ],
    ports: [{ name: "https", containerPort: 10257 }],
    readinessProbe: httpsProbe("/healthz", 10257, 3),
    livenessProbe: { ...httpsProbe("/healthz", 10257, 8), initialDelaySeconds: 15 },
    resources: { requests: { cpu: "100m", memory: "256Mi" } },
    securityContext: containerSecurityContext,
    volumeMounts: [
      { name: "pki", mountPath: PKI_DIR, readOnly: true },
      { name: "kubeconfig", mountPath: KUBECONFIG_DIR, readOnly: true },
    ],
  };
  const volumes = [
    pkiVolume([pkiFiles.caCert, pkiFiles.caKey, pkiFiles.serviceAccountKey]),
    {
      name: "kubeconfig",
      secret: {
        secretName: KUBECONFIG_SECRET,
        defaultMode: 0o440,
        items: [{ key: "controller-manager.conf", path: "controller-manager.conf" }],
      },
    },
  ];
  return [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: CONTROLLER_MANAGER_NAME, namespace, labels: labels(tenant, CONTROLLER_MANAGER_NAME) },
      spec: {
        replicas: controlPlaneReplicas(options.suspended, options.etcdStorage).controllerManager,
        selector: { matchLabels: selector(tenant, CONTROLLER_MANAGER_NAME) },
        template: podTemplate(options, CONTROLLER_MANAGER_NAME, podSpec([container], volumes)),
      },
    },
  ];
}

/** The workloads and their Services, in the order they start: etcd, API server, controller manager. */
export function controlPlaneWorkloadManifests(options: ControlPlaneManifestOptions): KubeObject[] {
  return [...etcdManifests(options), ...apiserverManifests(options), ...controllerManagerManifests(options)];
}
