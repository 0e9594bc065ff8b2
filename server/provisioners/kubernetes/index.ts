/** The `kubernetes` provisioner (./provisioner.ts): tenant control planes as pods in the super cluster. */
export {
  createKubernetesProvisioner,
  type EtcdStorage,
  type KubernetesProvisionerOptions,
} from "./provisioner";
