/**
 * etcd of a tenant's control plane: one member in a StatefulSet (its Services in ./services.ts), on TLS
 * with client certificates only, its data in an emptyDir or a claim, and a NetworkPolicy that lets
 * only the API server reach it.
 */
import type { KubeObject } from "@/server/k8s/apply";
import { pkiFiles } from "../pki";
import { APISERVER_NAME, controlPlaneNamespace, ETCD_NAME, labels, selector } from "./naming";
import {
  type ControlPlaneManifestOptions,
  containerEnv,
  containerSecurityContext,
  controlPlaneReplicas,
  PKI_DIR,
  pkiVolume,
  podSpec,
  podTemplate,
} from "./pods";

const ETCD_DATA_DIR = "/var/lib/etcd";

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

export function etcdManifests(options: ControlPlaneManifestOptions): KubeObject[] {
  const namespace = controlPlaneNamespace(options.tenant);
  const { tenant, etcdStorage } = options;
  const replicas = controlPlaneReplicas(options.suspended, etcdStorage).etcd;
  const container = {
    name: ETCD_NAME,
    image: `${options.images.registry}/etcd:${options.images.etcdTag}`,
    imagePullPolicy: "IfNotPresent",
    command: ["etcd"],
    // A new env rolls the StatefulSet: an etcd whose data is an emptyDir would lose it, so it keeps
    // Go's default GOGC (only a few MiB more idle).
    env: etcdStorage.kind === "emptyDir" ? [] : containerEnv(options),
    args: [
      `--name=${ETCD_NAME}-0`,
      `--data-dir=${ETCD_DATA_DIR}`,
      "--listen-client-urls=https://0.0.0.0:2379",
      `--advertise-client-urls=https://${options.addresses.etcd}:2379`,
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
    readinessProbe: { ...etcdHealthProbe, periodSeconds: 3, failureThreshold: 4 },
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
