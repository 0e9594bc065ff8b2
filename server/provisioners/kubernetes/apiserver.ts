/**
 * kube-apiserver of a tenant's control plane: a Deployment behind a ClusterIP Service (./services.ts), talking to
 * etcd with its own client certificate, and anonymous requests only on its health endpoints.
 */
import { authenticationConfiguration } from "@/server/cluster/hardening";
import type { KubeObject } from "@/server/k8s/apply";
import { RING0_SYSTEM_NAMESPACE } from "@/server/k8s/ring0-system";
import { syncLabels } from "@/server/syncer/contracts";
import {
  manifestList,
  STATIC_ADMISSION_FEATURE_GATE,
  staticAdmissionPolicies,
  staticPolicyPlugins,
} from "../admission-policies";
import { pkiFiles } from "../pki";
import {
  APISERVER_NAME,
  APISERVER_PORT,
  controlPlaneNamespace,
  controlPlaneServiceName,
  KUBELET_CLIENT_SECRET,
  labels,
  selector,
  TENANT_SERVICE_CIDR,
} from "./naming";
import {
  type ControlPlaneManifestOptions,
  containerEnv,
  containerSecurityContext,
  controlPlaneReplicas,
  httpsProbe,
  PKI_DIR,
  pkiVolume,
  podSpec,
  podTemplate,
  READINESS_FAILURES,
  READINESS_PERIOD_SECONDS,
} from "./pods";
import { KUBELET_CLIENT_MOUNT, kubeletClientFiles } from "./secrets";

/** The API server's AuthenticationConfiguration: anonymous requests only on its health endpoints. */
export const AUTHENTICATION_CONFIG_MAP = "apiserver-authentication";
const AUTHENTICATION_CONFIG_DIR = "/etc/kubernetes/authentication";
/** Ring0's admission policies, from files (../admission-policies.ts), and the configuration that loads them. */
export const ADMISSION_CONFIG_MAP = "apiserver-admission";
const ADMISSION_CONFIG_DIR = "/etc/kubernetes/admission";
const KUBELET_CLIENT_DIR = KUBELET_CLIENT_MOUNT;

/** The ConfigMap's files: the AdmissionConfiguration and one List per policy kind (a dir each, by key path). */
function admissionConfigMapData(kubeletClient: boolean): {
  data: Record<string, string>;
  items: { key: string; path: string }[];
} {
  const policies = staticAdmissionPolicies();
  const dirs = {
    validating: `${ADMISSION_CONFIG_DIR}/validating`,
    mutating: `${ADMISSION_CONFIG_DIR}/mutating`,
  };
  const config = {
    apiVersion: "apiserver.config.k8s.io/v1",
    kind: "AdmissionConfiguration",
    plugins: [
      ...staticPolicyPlugins(dirs),
      ...(kubeletClient
        ? [
            {
              // Every validating webhook gets the API server's client certificate (Ring0's quota
              // webhook takes the tenant from it), as a local control plane's does.
              name: "ValidatingAdmissionWebhook",
              configuration: {
                apiVersion: "apiserver.config.k8s.io/v1",
                kind: "WebhookAdmissionConfiguration",
                kubeConfigFile: `${KUBELET_CLIENT_DIR}/${kubeletClientFiles.webhookKubeconfig}`,
              },
            },
          ]
        : []),
    ],
  };
  return {
    data: {
      "config.json": `${JSON.stringify(config, null, 2)}\n`,
      "validating.json": manifestList(policies.validating),
      "mutating.json": manifestList(policies.mutating),
    },
    items: [
      { key: "config.json", path: "config.json" },
      { key: "validating.json", path: "validating/ring0.json" },
      { key: "mutating.json", path: "mutating/ring0.json" },
    ],
  };
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
    env: containerEnv(options, [{ name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }]),
    args: [
      "--advertise-address=$(POD_IP)",
      `--secure-port=${APISERVER_PORT}`,
      // etcd's client Service by its cluster IP (named in etcd's certificate): no cluster DNS needed.
      `--etcd-servers=https://${options.addresses.etcd}:2379`,
      `--etcd-cafile=${pki(pkiFiles.etcdCaCert)}`,
      `--etcd-certfile=${pki(pkiFiles.apiserverEtcdClientCert)}`,
      `--etcd-keyfile=${pki(pkiFiles.apiserverEtcdClientKey)}`,
      `--client-ca-file=${pki(pkiFiles.caCert)}`,
      `--tls-cert-file=${pki(pkiFiles.apiserverCert)}`,
      `--tls-private-key-file=${pki(pkiFiles.apiserverKey)}`,
      ...(options.kubeletClient && options.authorizationWebhook
        ? [
            // Ring0's, asked only about what RBAC refused (tenant admins in their own CRDs' groups).
            "--authorization-mode=Node,RBAC,Webhook",
            `--authorization-webhook-config-file=${KUBELET_CLIENT_DIR}/${kubeletClientFiles.authorizationKubeconfig}`,
            "--authorization-webhook-version=v1",
            // A refusal is cached briefly, so a new admin's rights are not held back for long.
            "--authorization-webhook-cache-authorized-ttl=1m",
            "--authorization-webhook-cache-unauthorized-ttl=10s",
          ]
        : ["--authorization-mode=Node,RBAC"]),
      "--enable-admission-plugins=NodeRestriction",
      "--allow-privileged=true",
      `--service-account-issuer=${controlPlaneServiceName(tenant)}`,
      `--service-account-key-file=${pki(pkiFiles.serviceAccountPub)}`,
      `--service-account-signing-key-file=${pki(pkiFiles.serviceAccountKey)}`,
      `--service-cluster-ip-range=${TENANT_SERVICE_CIDR}`,
      `--authentication-config=${AUTHENTICATION_CONFIG_DIR}/authentication-config.yaml`,
      `--admission-control-config-file=${ADMISSION_CONFIG_DIR}/config.json`,
      `--feature-gates=${STATIC_ADMISSION_FEATURE_GATE}=true`,
      "--profiling=false",
      // The tenant's webhooks and aggregated APIs at their Services' endpoints: the tenant's own pods,
      // which the tenant wall lets this API server reach (a Service's cluster IP in the tenant need
      // not be its copy's below).
      "--enable-aggregator-routing=true",
      ...(options.kubeletClient
        ? [
            // Kubelets through Ring0's vn-agents, at the vNodes' Hostname (where the agents listen).
            "--kubelet-preferred-address-types=Hostname",
            `--kubelet-client-certificate=${KUBELET_CLIENT_DIR}/${kubeletClientFiles.cert}`,
            `--kubelet-client-key=${KUBELET_CLIENT_DIR}/${kubeletClientFiles.key}`,
            `--kubelet-certificate-authority=${KUBELET_CLIENT_DIR}/${kubeletClientFiles.ca}`,
          ]
        : []),
    ],
    ports: [{ name: "https", containerPort: APISERVER_PORT }],
    readinessProbe: httpsProbe("/readyz", APISERVER_PORT, READINESS_FAILURES, READINESS_PERIOD_SECONDS),
    livenessProbe: { ...httpsProbe("/livez", APISERVER_PORT, 8), initialDelaySeconds: 15 },
    resources: { requests: { cpu: "250m", memory: "512Mi" } },
    securityContext: containerSecurityContext,
    volumeMounts: [
      { name: "pki", mountPath: PKI_DIR, readOnly: true },
      { name: "authentication", mountPath: AUTHENTICATION_CONFIG_DIR, readOnly: true },
      { name: "admission", mountPath: ADMISSION_CONFIG_DIR, readOnly: true },
      ...(options.kubeletClient
        ? [{ name: "kubelet-client", mountPath: KUBELET_CLIENT_DIR, readOnly: true }]
        : []),
    ],
  };
  const admission = admissionConfigMapData(options.kubeletClient === true);
  const volumes = [
    ...(options.kubeletClient
      ? [{ name: "kubelet-client", secret: { secretName: KUBELET_CLIENT_SECRET, defaultMode: 0o440 } }]
      : []),
    { name: "authentication", configMap: { name: AUTHENTICATION_CONFIG_MAP } },
    { name: "admission", configMap: { name: ADMISSION_CONFIG_MAP, items: admission.items } },
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
      kind: "ConfigMap",
      metadata: { name: ADMISSION_CONFIG_MAP, namespace, labels: labels(tenant, APISERVER_NAME) },
      data: admission.data,
    },
    {
      // Who may dial the API server, where the super cluster's CNI enforces policies: its own
      // control plane (the controller manager), the tenant's own pods (the super namespaces the
      // syncer made for it: labels only Ring0 writes) and Ring0's replicas. A node's own traffic
      // (Ring0 on the host of the local world, the kubelet's probes) is the CNI's to allow.
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: `${APISERVER_NAME}-clients`, namespace, labels: labels(tenant, APISERVER_NAME) },
      spec: {
        podSelector: { matchLabels: selector(tenant, APISERVER_NAME) },
        policyTypes: ["Ingress"],
        ingress: [
          {
            from: [
              { podSelector: {} },
              {
                namespaceSelector: {
                  matchLabels: { [syncLabels.tenant]: tenant, [syncLabels.managed]: "true" },
                },
              },
              {
                namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": RING0_SYSTEM_NAMESPACE } },
              },
            ],
            ports: [{ port: APISERVER_PORT, protocol: "TCP" }],
          },
        ],
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
        template: podTemplate(options, APISERVER_NAME, {
          ...podSpec([container], volumes),
          // On SIGTERM it stops listening at once, then waits on its open watches (clients that
          // reconnect anyway) until killed: 30 s of every suspend, upgrade and delete for nothing.
          terminationGracePeriodSeconds: 5,
        }),
      },
    },
  ];
}
