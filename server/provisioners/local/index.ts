/**
 * The local provisioner (./provisioner.ts) and what tests, benchmarks and the runtime use of it:
 * tenant paths and names, the record, the kwokctl arguments and config rewrites, the vn-agent flags.
 */
export { sortVersionsNewestFirst } from "./binaries";
export { LOCAL_COMPONENTS, type LocalComponent } from "./components";
export { vnAgentKubeletArgs } from "./kubelet-client";
export { controlPlaneCreateArgs, replaceBinDir, replacePorts } from "./kwokctl-config";
export { checkTenantName, localClusterName } from "./paths";
export { createLocalProvisioner, type LocalProvisionerOptions } from "./provisioner";
export { type LocalControlPlanePorts, type LocalControlPlaneRecord, parseLocalRecord } from "./record";
