/**
 * The local world's data plane for integration suites, wired the way the runtime wires it: the
 * run's super cluster (kwok) with the kwok debug binder (logs/exec of labelled pods), one vn-agent
 * per node, tenants with real control planes from the local provisioner (Tenant objects, defaults,
 * the default service account), a syncer serving only these tenants, and the control plane
 * directory installed for Ring0's own clients. Each tenant has an admin signed in with an API token.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { podAuthorizationUrl } from "@/server/admission/registration";
import { localSuperCluster } from "@/server/cluster/local";
import { killProcessesMentioning } from "@/server/cluster/process";
import { POD_API_ADDRESS } from "@/server/cluster/real-node/plan";
import { startPodDns } from "@/server/cluster/real-node/pod-dns";
import { startTenantWall } from "@/server/cluster/real-node/tenant-wall";
import { startLocalVolumes } from "@/server/cluster/real-node/volumes";
import {
  SIMULATED_POD_LABEL,
  simulatedPodLogFile,
  startSimulatedPodLogs,
} from "@/server/cluster/simulated-pods";
import type { SessionUser } from "@/server/core/roles";
import { createPrismaClient, disconnectDb, type PrismaClient, setDatabaseUrl } from "@/server/db/client";
import { createObject, type KubeObject } from "@/server/k8s/apply";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import type { Logger } from "@/server/logger";
import { createKubernetesProvisioner } from "@/server/provisioners/kubernetes";
import { createLocalProvisioner } from "@/server/provisioners/local";
import { auditedRefusals } from "@/server/provisioners/local/egress-audit";
import type { Provisioner } from "@/server/provisioners/types";
import { LOCAL_STORAGE_CLASS } from "@/server/syncer/isolation-schema";
import { superNamespace } from "@/server/syncer/naming";
import { createSyncer, type Syncer } from "@/server/syncer/syncer";
import {
  provisionerDirectory,
  readOrUndefined,
  ref,
  removeTenant,
  startTenants,
} from "@/server/syncer/test-world";
import { type ControlPlaneDirectory, setControlPlaneDirectory } from "@/server/tenants/control-planes";
import { applyTenantDefaults } from "@/server/tenants/defaults";
import { createTokenService } from "@/server/tokens/service";
import { startVnAgents, type VnAgents } from "@/server/vn-agent/vn-agents";
import { signInTenantAdmin } from "./control-plane-access";
import { testDatabaseUrl } from "./database";

export interface DataPlaneWorld {
  superCluster: ClusterConnection;
  db: PrismaClient;
  /** Where that database listens (a Ring0 service a tenant must never reach). */
  databaseUrl: string;
  /** The super cluster's state dir (kwok's simulated log files live under it). */
  superStateDir: string;
  /** Each tenant's control plane, with its admin credentials. */
  admin: Record<string, ClusterConnection>;
  /** Each tenant's admin, signed in, and an API token of theirs confined to the tenant. */
  users: Record<string, SessionUser>;
  tokens: Record<string, string>;
  provisioner: Provisioner;
  /** The control plane directory of these tenants (also installed process-wide). */
  directory: ControlPlaneDirectory;
  /** Where the tenants' control planes (and the vn-agents' PKI) live. */
  stateDir: string;
  syncer: Syncer;
  agents: VnAgents;
  /** The simulated container log file kwok serves for a super-cluster pod. */
  kwokLogFile(superNamespace: string, pod: string): string;
  /**
   * Creates pod `name` (nginx, one container of the same name) in the tenant's `default` namespace
   * and waits until it runs below on a simulated node and its simulated log exists; returns the log file.
   */
  runningPod(tenant: string, name: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startDataPlaneWorld(options: {
  tenants: string[];
  logger: Logger;
  /** A prefix for the temp dirs (names the suite in /tmp). */
  name: string;
  /** Another local super cluster than the run's (one with real nodes). */
  superCluster?: { connection: ClusterConnection; stateDir: string };
  /** The tenants' pods' API address, as if real nodes had given them one (their pods are simulated). */
  podEndpoint?: { host: string; port: number };
  /**
   * The super cluster has real nodes: run what Ring0's leader runs for them (the pods' DNS, the
   * local volumes' provisioner), as server/runtime/tenants.ts does.
   */
  realNodes?: boolean;
  /** With realNodes: the operator's leave for one tenant's pods to reach another's. */
  trafficAllowances?: [string, string][];
  /** With realNodes: false when the caller keeps the tenant wall itself (from before the world). */
  tenantWall?: boolean;
  /**
   * With realNodes: the tenants' control planes as pods of the super cluster (the `kubernetes`
   * provisioner, etcd on a `ring0-local` volume; their images must be in Ring0's registry) instead
   * of processes on this host.
   */
  controlPlanesInPods?: boolean;
  /**
   * Runs once the control plane directory is set and before any control plane is made (Ring0's
   * webhooks start there at run time, so control planes are made knowing where they listen); what
   * it returns runs on stop.
   */
  beforeControlPlanes?: (context: {
    stateDir: string;
    directory: ControlPlaneDirectory;
  }) => Promise<(() => Promise<void>) | undefined>;
}): Promise<DataPlaneWorld> {
  const { logger, tenants } = options;
  const ours = new Set(tenants);
  const superStateDir = options.superCluster?.stateDir ?? inject("superStateDir");
  const superCluster = options.superCluster?.connection ?? testSuperCluster();
  await installCrds(superCluster, logger);
  const url = await testDatabaseUrl();
  const db = createPrismaClient(url);
  setDatabaseUrl(url);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), `ring0-${options.name}-`));
  const cleanups: Array<() => Promise<void> | void> = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        logger.warn("data plane world cleanup step failed", { error });
      }
    }
    cleanups.length = 0;
  };
  cleanups.push(async () => {
    await disconnectDb();
    await db.$disconnect();
    await killProcessesMentioning(`${stateDir}/`);
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  try {
    const binder = startSimulatedPodLogs(superCluster, { stateDir: superStateDir, logger });
    cleanups.push(() => binder.stop());
    const agents = await startVnAgents({
      superCluster,
      stateDir,
      logger,
      kubeletTls: await localSuperCluster({ stateDir: superStateDir, logger }).kubeletClient(),
      // API servers in pods reach the agents on the pod API address.
      ...(options.controlPlanesInPods ? { alsoOn: [POD_API_ADDRESS] } : {}),
    });
    cleanups.push(() => agents.stop());
    await agents.ready();

    // Ring0's own super-cluster clients (super pods, node shells) use the process-wide connection.
    setSuperCluster(superCluster);
    cleanups.push(() => setSuperCluster(null));
    // The local volumes' provisioner first: a control plane in pods claims one for etcd.
    if (options.realNodes) {
      const volumes = startLocalVolumes({ superCluster, stateDir: superStateDir, logger });
      cleanups.push(async () => volumes.stop());
    }
    const provisioner = options.controlPlanesInPods
      ? createKubernetesProvisioner({
          superCluster,
          logger,
          etcdStorage: { kind: "persistentVolumeClaim", size: "1Gi", storageClassName: LOCAL_STORAGE_CLASS },
          vnAgentPki: stateDir,
          kubeletHost: POD_API_ADDRESS,
          authorizationWebhookUrl: podAuthorizationUrl,
        })
      : createLocalProvisioner({
          stateDir,
          logger,
          vnAgentStateDir: stateDir,
          egress: { onRefused: auditedRefusals() },
        });
    const directory = provisionerDirectory(ours, () => provisioner, options.podEndpoint);
    setControlPlaneDirectory(directory);
    cleanups.push(async () => {
      setControlPlaneDirectory(null);
      for (const tenant of tenants) await removeTenant(superCluster, provisioner, tenant);
    });
    const before = await options.beforeControlPlanes?.({ stateDir, directory });
    if (before) cleanups.push(before);
    const conns = await startTenants(superCluster, provisioner, tenants);
    const admin: Record<string, ClusterConnection> = {};
    await Promise.all(
      tenants.map(async (tenant, index) => {
        const conn = conns[index] as ClusterConnection;
        admin[tenant] = conn;
        await eventually(
          async () =>
            (await applyTenantDefaults(conn, { tenant, admins: [] })) === undefined ? true : undefined,
          60_000,
        );
        await eventually(() => readOrUndefined(conn, ref("ServiceAccount", "default", "default")), 60_000);
      }),
    );

    if (options.realNodes) {
      const dns = await startPodDns({
        superCluster,
        logger,
        host: POD_API_ADDRESS,
        podApi: () => POD_API_ADDRESS,
      });
      cleanups.push(() => dns.close());
      if (options.tenantWall !== false) {
        const wall = await startTenantWall({ superCluster, logger, allowances: options.trafficAllowances });
        cleanups.push(() => wall.stop());
      }
    }
    const syncer = createSyncer({
      superCluster,
      directory,
      logger,
      heartbeatIntervalMs: 2_000,
      tenantRecheckMs: 1_000,
      superPodLabels: { [SIMULATED_POD_LABEL]: "true" },
      tenantFilter: (tenant) => ours.has(tenant),
      podDns: options.realNodes ? POD_API_ADDRESS : undefined,
    });
    await syncer.start();
    cleanups.push(() => syncer.stop());

    const tokenService = createTokenService({ db });
    const users: Record<string, SessionUser> = {};
    const tokens: Record<string, string> = {};
    for (const tenant of tenants) {
      const user = await signInTenantAdmin(db, tenant);
      users[tenant] = user;
      const issued = await tokenService.issueToken({ user, tenant, name: "streams", expiresInDays: 1 });
      tokens[tenant] = issued.plaintext;
    }

    return {
      superCluster,
      db,
      databaseUrl: url,
      superStateDir,
      admin,
      users,
      tokens,
      provisioner,
      directory,
      stateDir,
      syncer,
      agents,
      kwokLogFile: (namespace, pod) => simulatedPodLogFile(superStateDir, namespace, pod),
      async runningPod(tenant, name) {
        const conn = admin[tenant];
        if (!conn) throw new Error(`no control plane of ${tenant} in this world`);
        await createObject(conn, {
          ...ref("Pod", name, "default"),
          spec: { containers: [{ name, image: "nginx" }] },
        });
        await eventually(async () => {
          const pod = await readOrUndefined<
            KubeObject & { status?: { phase?: string }; spec?: { nodeName?: string } }
          >(conn, ref("Pod", name, "default"));
          return pod?.status?.phase === "Running" && pod.spec?.nodeName ? pod : undefined;
        }, 120_000);
        const logFile = simulatedPodLogFile(superStateDir, superNamespace(tenant, "default"), name);
        await eventually(() => (fs.existsSync(logFile) ? true : undefined), 60_000);
        return logFile;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
