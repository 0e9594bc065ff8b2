/**
 * The real-nodes benchmark's world, wired as the runtime wires the local one: a local super
 * cluster with one real node (and one simulated node, tainted) in a temp state dir, a vn-agent per
 * node, one tenant control plane of the local provisioner with a Tenant object and its defaults,
 * the syncer, embedded PostgreSQL and the kube gateway, with kubeconfigs for the tenant admin
 * (through the gateway) and for the super cluster (straight to its API server and kubelet).
 */
import fs from "node:fs";
import path from "node:path";
import { localSuperCluster } from "@/server/cluster/local";
import { type ClusterConnection, connectCluster } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { createLocalProvisioner } from "@/server/provisioners/local";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { createSyncer } from "@/server/syncer/syncer";
import { type ControlPlaneDirectory, setControlPlaneDirectory } from "@/server/tenants/control-planes";
import { startVnAgents } from "@/server/vn-agent/vn-agents";
import { startDatabase, tenantAdminToken } from "../lib/database";
import { say } from "../lib/figures";
import { startBenchGateway, writeTokenKubeconfig } from "../lib/gateway";
import { type CleanupStack, logger } from "../lib/run";
import { createTenantObject, defaultServiceAccount, startBenchTenant } from "../lib/tenants";

export const NAMESPACE = "default";

export interface RealNodesWorld {
  tenant: string;
  /** The super cluster: its admin kubeconfig and connection. */
  superKubeconfig: string;
  superConn: ClusterConnection;
  /** The tenant admin's kubeconfig through the kube gateway, and a connection with it. */
  tenantKubeconfig: string;
  tenantConn: ClusterConnection;
  /** The tenant API server straight, with its admin certificate (no gateway): for the breakdown. */
  tenantAdminKubeconfig: string;
  kubectlPath: string;
  stateDir: string;
}

export async function startRealNodesWorld(
  root: string,
  cleanup: CleanupStack,
  binDir: string,
  elapsed: () => number,
): Promise<RealNodesWorld> {
  const stateDir = path.join(root, "world");
  cleanup.push("local world", () => removeLocalWorld(stateDir, logger));
  const superCluster = localSuperCluster({ stateDir, logger, binDir });
  await superCluster.up({ nodes: 1, realNodes: 1 });
  const superConn = superCluster.connect();
  await installCrds(superConn, logger);
  say(`super cluster up with a real node (${elapsed()} s)`);

  const database = await startDatabase(path.join(root, "pg"));
  cleanup.push("postgres stop", () => database.stop());

  const agents = await startVnAgents({
    superCluster: superConn,
    stateDir,
    logger,
    kubeletTls: await superCluster.kubeletClient(),
  });
  cleanup.push("vn-agents", () => agents.stop());
  await agents.ready();

  const tenant = `rn${Date.now().toString(36).slice(-5)}`;
  const provisioner = createLocalProvisioner({ stateDir, logger, binDir });
  await createTenantObject(superConn, tenant);
  const { access, conn: admin } = await startBenchTenant(provisioner, tenant, {
    check: () => cleanup.throwIfStopping(),
  });
  await defaultServiceAccount(admin, NAMESPACE);
  const directory: ControlPlaneDirectory = {
    async lookup(name) {
      return name === tenant ? { state: "ready", access } : { state: "absent" };
    },
  };
  setControlPlaneDirectory(directory);
  cleanup.push("control plane directory", () => setControlPlaneDirectory(null));
  const syncer = createSyncer({
    superCluster: superConn,
    directory,
    logger,
    tenantFilter: (name) => name === tenant,
    workers: Number(process.env.BENCH_SYNCER_WORKERS ?? 4),
  });
  cleanup.push("syncer stop", () => syncer.stop());
  await syncer.start();

  const gateway = await startBenchGateway(path.join(root, "gateway"), database.db, directory);
  cleanup.push("gateway", () => gateway.close());
  const token = await tenantAdminToken(database.db, tenant);
  const tenantKubeconfig = writeTokenKubeconfig(
    path.join(root, "tenant.kubeconfig"),
    `${gateway.url}/k8s/tenants/${tenant}`,
    gateway.ca,
    token,
  );
  const b64 = (text: string) => Buffer.from(text).toString("base64");
  const tenantAdminKubeconfig = path.join(root, "tenant-admin.kubeconfig");
  fs.writeFileSync(
    tenantAdminKubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{name: t, cluster: {server: '${access.server}', certificate-authority-data: ${b64(access.ca)}}}]`,
      `users: [{name: admin, user: {client-certificate-data: ${b64(access.cert)}, client-key-data: ${b64(access.key)}}}]`,
      "contexts: [{name: t, context: {cluster: t, user: admin}}]",
      "current-context: t",
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  say(`tenant ${tenant} up behind the gateway, syncer started (${elapsed()} s)`);
  return {
    tenant,
    superKubeconfig: superCluster.kubeconfigPath,
    superConn,
    tenantKubeconfig,
    tenantConn: connectCluster(`${tenant}-via-gateway`, { file: tenantKubeconfig }),
    tenantAdminKubeconfig,
    kubectlPath: await superCluster.kubectlPath(),
    stateDir,
  };
}
