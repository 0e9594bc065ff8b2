/**
 * kube-controller-manager of a tenant's control plane: a Deployment with its kubeconfig from the
 * kubeconfig Secret, signing with the tenant's CA and issuing service-account tokens.
 */
import type { KubeObject } from "@/server/k8s/apply";
import { pkiFiles } from "../pki";
import {
  CONTROLLER_MANAGER_NAME,
  controlPlaneNamespace,
  KUBECONFIG_SECRET,
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

const KUBECONFIG_DIR = "/etc/kubernetes/kubeconfig";

export function controllerManagerManifests(options: ControlPlaneManifestOptions): KubeObject[] {
  const namespace = controlPlaneNamespace(options.tenant);
  const { tenant } = options;
  const kubeconfig = `${KUBECONFIG_DIR}/controller-manager.conf`;
  const container = {
    name: CONTROLLER_MANAGER_NAME,
    image: `${options.images.registry}/kube-controller-manager:v${options.version}`,
    imagePullPolicy: "IfNotPresent",
    command: ["kube-controller-manager"],
    env: containerEnv(options),
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
    readinessProbe: httpsProbe("/healthz", 10257, READINESS_FAILURES, READINESS_PERIOD_SECONDS),
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
      // Nothing dials the controller manager (its health port is the kubelet's, from the node).
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: {
        name: `${CONTROLLER_MANAGER_NAME}-isolated`,
        namespace,
        labels: labels(tenant, CONTROLLER_MANAGER_NAME),
      },
      spec: {
        podSelector: { matchLabels: selector(tenant, CONTROLLER_MANAGER_NAME) },
        policyTypes: ["Ingress"],
      },
    },
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
