/**
 * The streams benchmark's world, as the runtime wires the local one (test/integration/
 * data-plane-world.ts): a local super cluster in a temp state dir (kwok nodes, the kwok debug
 * binder serving the pods' logs and shells), a vn-agent per node, one tenant control plane of the
 * local provisioner with a Tenant object and the tenant defaults, the syncer, embedded PostgreSQL,
 * and the tenant's pods Running with their logs served. One state dir holds the super cluster, the
 * vn-agent PKI and the tenant control plane: removeLocalWorld takes them all down.
 */
import fs from "node:fs";
import path from "node:path";
import { localSuperCluster } from "@/server/cluster/local";
import {
  SIMULATED_POD_LABEL,
  simulatedPodLogFile,
  startSimulatedPodLogs,
} from "@/server/cluster/simulated-pods";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { kubeRequest } from "@/server/k8s/transport";
import { createLocalProvisioner } from "@/server/provisioners/local";
import type { ControlPlaneAccess } from "@/server/provisioners/types";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { superNamespace } from "@/server/syncer/naming";
import { createSyncer } from "@/server/syncer/syncer";
import { type ControlPlaneDirectory, setControlPlaneDirectory } from "@/server/tenants/control-planes";
import { startVnAgents } from "@/server/vn-agent/vn-agents";
import { type BenchDatabase, startDatabase } from "../lib/database";
import { say } from "../lib/figures";
import { type CleanupStack, logger, waitFor } from "../lib/run";
import { createTenantObject, defaultServiceAccount, startBenchTenant } from "../lib/tenants";
import { NAMESPACE, PODS } from "./sizes";

export interface StreamsWorld {
  tenant: string;
  tenantAccess: ControlPlaneAccess;
  database: BenchDatabase;
  /** The nodes whose vn-agent logs can be followed. */
  nodes(): string[];
  /** The tenant's pods (in NAMESPACE) and the log file kwok serves for each. */
  pods: string[];
  logFiles: string[];
}

export async function startStreamsWorld(
  root: string,
  cleanup: CleanupStack,
  binDir: string,
  elapsed: () => number,
): Promise<StreamsWorld> {
  const world = path.join(root, "world");
  cleanup.push("local world", () => removeLocalWorld(world, logger));
  const superCluster = localSuperCluster({ stateDir: world, logger, binDir });
  await superCluster.up({ nodes: 3 });
  const superConn = superCluster.connect();
  await installCrds(superConn, logger);
  say(`super cluster up (${elapsed()} s)`);

  const database = await startDatabase(path.join(root, "pg"));
  cleanup.push("postgres stop", () => database.stop());

  // The data plane as the runtime wires it for the local world (test/integration/data-plane-world.ts).
  const binder = startSimulatedPodLogs(superConn, { stateDir: world, logger });
  cleanup.push("kwok debug binder", () => binder.stop());
  const agents = await startVnAgents({
    superCluster: superConn,
    stateDir: world,
    logger,
    kubeletTls: await superCluster.kubeletClient(),
  });
  cleanup.push("vn-agents", () => agents.stop());
  await agents.ready();

  const tenant = `sm${Date.now().toString(36).slice(-5)}`;
  const provisioner = createLocalProvisioner({ stateDir: world, logger, binDir });
  await createTenantObject(superConn, tenant);
  const { access: tenantAccess, conn: admin } = await startBenchTenant(provisioner, tenant, {
    check: () => cleanup.throwIfStopping(),
  });
  await defaultServiceAccount(admin, NAMESPACE);
  const directory: ControlPlaneDirectory = {
    async lookup(name) {
      return name === tenant ? { state: "ready", access: tenantAccess } : { state: "absent" };
    },
  };
  setControlPlaneDirectory(directory);
  cleanup.push("control plane directory", () => setControlPlaneDirectory(null));
  const syncer = createSyncer({
    superCluster: superConn,
    directory,
    logger,
    superPodLabels: { [SIMULATED_POD_LABEL]: "true" },
    tenantFilter: (name) => name === tenant,
  });
  cleanup.push("syncer stop", () => syncer.stop());
  await syncer.start();
  say(`tenant ${tenant} up, syncer started (${elapsed()} s)`);

  const { pods, logFiles } = await runningPods(admin, cleanup, superNamespace(tenant, NAMESPACE), world);
  say(`${PODS} pods Running (${elapsed()} s)`);
  return { tenant, tenantAccess, database, nodes: () => [...agents.endpoints().keys()], pods, logFiles };
}

/** The pods, Running on kwok nodes, their simulated logs and shells served by kwok. */
async function runningPods(admin: ClusterConnection, cleanup: CleanupStack, below: string, world: string) {
  const pods = Array.from({ length: PODS }, (_, index) => `bench-${index}`);
  for (const pod of pods) {
    await kubeRequest(admin, {
      method: "POST",
      path: `/api/v1/namespaces/${NAMESPACE}/pods`,
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: pod },
        spec: { containers: [{ name: "app", image: "busybox" }] },
      },
    });
  }
  const logFiles = pods.map((pod) => simulatedPodLogFile(world, below, pod));
  await waitFor(
    "the pods Running with their logs served",
    async () => {
      cleanup.throwIfStopping();
      const list = await kubeRequest<{ items: Array<{ status?: { phase?: string } }> }>(admin, {
        path: `/api/v1/namespaces/${NAMESPACE}/pods`,
      });
      return (
        list.items.filter((pod) => pod.status?.phase === "Running").length === PODS &&
        logFiles.every((file) => fs.existsSync(file))
      );
    },
    { timeoutMs: 180_000, everyMs: 500 },
  );
  return { pods, logFiles };
}
