/**
 * kube-apiserver of a tenant's control plane: a Deployment behind a ClusterIP Service, talking to
 * etcd with its own client certificate, and anonymous requests only on its health endpoints.
 */
import { authenticationConfiguration } from "@/server/cluster/hardening";
import type { KubeObject } from "@/server/k8s/apply";
import { pkiFiles } from "../pki";
import {
  APISERVER_NAME,
  APISERVER_PORT,
  controlPlaneEndpoint,
  controlPlaneNamespace,
  ETCD_NAME,
  labels,
  selector,
  TENANT_SERVICE_CIDR,
} from "./naming";
import {
  type ControlPlaneManifestOptions,
  containerSecurityContext,
  controlPlaneReplicas,
  httpsProbe,
  PKI_DIR,
  pkiVolume,
  podSpec,
  podTemplate,
} from "./pods";

/** The API server's AuthenticationConfiguration: anonymous requests only on its health endpoints. */
export const AUTHENTICATION_CONFIG_MAP = "apiserver-authentication";
const AUTHENTICATION_CONFIG_DIR = "/etc/kubernetes/authentication";

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
