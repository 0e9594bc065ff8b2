/**
 * The syncer benchmark's world: a local super cluster (kwok nodes schedule and "run" pods), ten
 * tenant control planes of the local provisioner with Tenant objects, a namespace below per tenant
 * for the direct baseline, and the syncer as the runtime starts it (server/runtime/tenants.ts:
 * default workers, patrol, heartbeat and recheck intervals, the local world's super pod label).
 * One state dir holds the super cluster and the tenant control planes, as the runtime's local
 * world has it: removeLocalWorld takes both down.
 */
import path from "node:path";
import { localSuperCluster } from "@/server/cluster/local";
import { SIMULATED_POD_LABEL } from "@/server/cluster/simulated-pods";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { kubeRequest } from "@/server/k8s/transport";
import { createLocalProvisioner } from "@/server/provisioners/local";
import type { ControlPlaneAccess } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { createSyncer, type Syncer } from "@/server/syncer/syncer";
import { createConnectionCache } from "@/server/tenants/connections";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import { say } from "../lib/figures";
import { type CleanupStack, logger, waitFor } from "../lib/run";
import { controlPlaneRunning, createTenantObject, defaultServiceAccount } from "../lib/tenants";
import { NODES, RUNNING_TIMEOUT_MS, TENANT_NAMESPACE, TENANTS } from "./sizes";

export interface SyncerWorld {
  superConn: ClusterConnection;
  tenants: string[];
  /** Each tenant's control plane as its admin. */
  tenantConns: Map<string, ClusterConnection>;
  /** The baseline's namespaces below, one per tenant it stands in for. */
  directNamespaces: string[];
  syncer: Syncer;
  tenantControlPlanesUpMs: number;
  /** Throws once cleanup has started (a signal), so polling loops end. */
  check: () => void;
}

export async function startSyncerWorld(options: {
  root: string;
  binDir: string;
  cleanup: CleanupStack;
  started: number;
  noteLoad: (phase: string) => void;
}): Promise<SyncerWorld> {
  const { cleanup, binDir, noteLoad } = options;
  const check = () => cleanup.throwIfStopping();
  const world = path.join(options.root, "world");
  cleanup.push("local world", () => removeLocalWorld(world, logger));
  const superCluster = localSuperCluster({ stateDir: world, logger, binDir });
  await superCluster.up({ nodes: NODES });
  const superConn = superCluster.connect();
  await installCrds(superConn, logger);
  noteLoad("super cluster up");
  say(`super cluster up with ${NODES} nodes (${Math.round(performance.now() - options.started)} ms)`);

  // Ten tenants as the tenant controller makes them: a Tenant object, a running control plane.
  const provisioner = createLocalProvisioner({ stateDir: world, logger, binDir });
  const suffix = Date.now().toString(36).slice(-4);
  const tenants = Array.from({ length: TENANTS }, (_, index) => `sb${suffix}-${index}`);
  const version = availableVersions()[0] as string;
  for (const tenant of tenants) await createTenantObject(superConn, tenant);
  const tenantsStarted = performance.now();
  await Promise.all(tenants.map((tenant) => provisioner.ensure({ tenant, version, suspended: false })));
  const accesses = new Map<string, ControlPlaneAccess>();
  await Promise.all(
    tenants.map(async (tenant) => {
      const access = await controlPlaneRunning(provisioner, tenant, version, {
        timeoutMs: RUNNING_TIMEOUT_MS,
        everyMs: 500,
        check,
        log: say,
      });
      accesses.set(tenant, access);
    }),
  );
  const connections = createConnectionCache();
  const tenantConns = new Map(
    tenants.map((tenant) => [
      tenant,
      connections.connectionFor(tenant, accesses.get(tenant) as ControlPlaneAccess),
    ]),
  );
  await Promise.all([...tenantConns.values()].map((conn) => defaultServiceAccount(conn, TENANT_NAMESPACE)));
  const tenantControlPlanesUpMs = Math.round(performance.now() - tenantsStarted);
  noteLoad("tenant control planes up");
  say(`${TENANTS} tenant control planes up (${tenantControlPlanesUpMs} ms)`);

  const directNamespaces = tenants.map((_, index) => `bench-direct-${index}`);
  for (const namespace of directNamespaces) {
    await kubeRequest(superConn, {
      method: "POST",
      path: "/api/v1/namespaces",
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
    });
  }
  await Promise.all(directNamespaces.map((namespace) => defaultServiceAccount(superConn, namespace)));

  // The syncer as server/runtime/tenants.ts starts it; the directory answers with admin access
  // (the runtime's reads the same access through the Tenant's status).
  const directory: ControlPlaneDirectory = {
    async lookup(tenant) {
      const access = accesses.get(tenant);
      return access ? { state: "ready", access } : { state: "absent" };
    },
  };
  const syncer = createSyncer({
    superCluster: superConn,
    directory,
    logger,
    superPodLabels: { [SIMULATED_POD_LABEL]: "true" },
  });
  cleanup.push("syncer stop", () => syncer.stop());
  await syncer.start();
  await waitFor(
    "every tenant syncing",
    async () => {
      check();
      const states = syncer.stats().tenants;
      return tenants.every((tenant) => states[tenant]?.state === "syncing");
    },
    { timeoutMs: 120_000, everyMs: 200 },
  );
  return { superConn, tenants, tenantConns, directNamespaces, syncer, tenantControlPlanesUpMs, check };
}
