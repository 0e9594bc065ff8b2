/**
 * The objects of a tenant control plane that runs as pods in the super cluster, as pure functions of
 * the spec: a namespace per tenant (./naming.ts); its Services, whose cluster IPs everything else
 * dials (./services.ts); etcd as a one-replica StatefulSet (./etcd.ts); kube-apiserver and kube-controller-manager as Deployments
 * (./apiserver.ts, ./controller-manager.ts) on what their pods share (./pods.ts); the PKI and
 * kubeconfigs as Secrets (./secrets.ts). ./provisioner.ts applies them; the unit tests read them.
 */
import type { KubeObject } from "@/server/k8s/apply";
import { apiserverManifests } from "./apiserver";
import { controllerManagerManifests } from "./controller-manager";
import { etcdManifests } from "./etcd";
import type { ControlPlaneManifestOptions } from "./pods";

export { AUTHENTICATION_CONFIG_MAP, apiserverManifests } from "./apiserver";
export { controllerManagerManifests } from "./controller-manager";
export { etcdManifests } from "./etcd";
export {
  APISERVER_NAME,
  APISERVER_PORT,
  CONTROL_PLANE_LABEL,
  CONTROL_PLANE_NAME_LABEL,
  CONTROLLER_MANAGER_NAME,
  type ControlPlaneAddresses,
  controlPlaneNamespace,
  controlPlanePkiNames,
  controlPlaneServiceName,
  controlPlaneUrl,
  ETCD_CLIENT_SERVICE,
  ETCD_NAME,
  KUBECONFIG_SECRET,
  KUBELET_CLIENT_SECRET,
  MANAGED_BY_LABEL,
  NAMESPACE_PREFIX,
  namespaceManifest,
  PKI_SECRET,
  TENANT_LABEL,
} from "./naming";
export {
  type ControlPlaneImages,
  type ControlPlaneManifestOptions,
  controlPlaneReplicas,
  defaultImages,
  type EtcdStorage,
  mountedSecretFiles,
} from "./pods";
export {
  authorizationKubeconfig,
  kubeconfigSecretManifest,
  kubeletClientFiles,
  kubeletClientSecretManifest,
  pkiChecksum,
  pkiSecretManifest,
  renderKubeconfig,
} from "./secrets";

export { controlPlaneServiceManifests } from "./services";

/** The workloads, in the order they start: etcd, API server, controller manager. */
export function controlPlaneWorkloadManifests(options: ControlPlaneManifestOptions): KubeObject[] {
  return [...etcdManifests(options), ...apiserverManifests(options), ...controllerManagerManifests(options)];
}
