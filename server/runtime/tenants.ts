/**
 * Tenants at run time: the provisioners, the control plane directory (every replica: the gateway
 * and route handlers look tenants up through it) and the tenant controller (the Lease holder only).
 */

import fs from "node:fs";
import { isIPv6 } from "node:net";
import { podAuthorizationUrl } from "@/server/admission/registration";
import { startAdmission } from "@/server/admission/start";
import { recordAudit } from "@/server/audit/service";
import { localSuperCluster } from "@/server/cluster/local";
import { hasPodApiAddress } from "@/server/cluster/real-node/host-firewall";
import { POD_API_ADDRESS } from "@/server/cluster/real-node/plan";
import { type PodDns, startPodDns } from "@/server/cluster/real-node/pod-dns";
import { RING0_SERVER_NAMESPACE } from "@/server/cluster/real-node/ring0-pods";
import { startTenantWall } from "@/server/cluster/real-node/tenant-wall";
import { parseTrafficAllowances } from "@/server/cluster/real-node/traffic-allowances";
import { startLocalVolumes } from "@/server/cluster/real-node/volumes";
import { SIMULATED_POD_LABEL } from "@/server/cluster/simulated-pods";
import { createLeaderElector } from "@/server/controllers/leader";
import { parseCidrList } from "@/server/core/cidr";
import { getDb } from "@/server/db/client";
import type { Env } from "@/server/env";
import { createObject, type KubeObject, readObject, serverSideApply } from "@/server/k8s/apply";
import { type ClusterConnection, getSuperCluster } from "@/server/k8s/cluster";
import { isAlreadyExists } from "@/server/k8s/errors";
import { RING0_SYSTEM_NAMESPACE, ring0SystemNamespace } from "@/server/k8s/ring0-system";
import type { Logger } from "@/server/logger";
import { createKubernetesProvisioner, type EtcdStorage } from "@/server/provisioners/kubernetes";
import { createLocalProvisioner } from "@/server/provisioners/local";
import { parseEgressAllowances } from "@/server/provisioners/local/egress-allowances";
import { auditedRefusals } from "@/server/provisioners/local/egress-audit";
import { createEgressPolicy } from "@/server/provisioners/local/egress-policy";
import type { Provisioner } from "@/server/provisioners/types";
import { cachedDefaultShares } from "@/server/quotas/default-share-repository";
import { startQuotaSampler } from "@/server/quotas/sampler";
import { revokeGrantsOfDeletedTenant } from "@/server/sharing/tenant-deleted";
import { vnAgentLogProvider } from "@/server/streams/node-logs";
import { registerNodeLogProvider } from "@/server/streams/sources";
import { LOCAL_STORAGE_CLASS, parseIsolationPolicy } from "@/server/syncer/isolation-schema";
import { setSyncer } from "@/server/syncer/registry";
import { createSyncer } from "@/server/syncer/syncer";
import { createControlPlaneDirectory, setControlPlaneDirectory } from "@/server/tenants/control-planes";
import { startTenantController } from "@/server/tenants/controller";
import { createTenantRepository } from "@/server/tenants/repository";
import {
  type Provisioner as ProvisionerName,
  type TenantResource,
  tenantApiVersion,
  tenantInformer,
  tenantKind,
} from "@/server/tenants/tenant-resources";
import { startNodeAgents } from "@/server/vn-agent/node-agents";
import type { VnAgentPkiSource } from "@/server/vn-agent/pki";
import { startVnAgents, type VnAgents } from "@/server/vn-agent/vn-agents";

export const controllersNamespace = RING0_SYSTEM_NAMESPACE;
const syncWaitMs = 5_000;

/**
 * What Ring0 holds for a deleted tenant goes with it: its grants (given and received) are revoked,
 * its API tokens revoked, its memberships and embedded-IAM accounts deleted. A new tenant of the
 * same name starts clean — nothing of the old one's access carries over. The grants go first: a
 * failure throws, and the deletion is retried before the tenant's finalizer is removed.
 */
export async function forgetDeletedTenant(tenant: string, log: Logger): Promise<void> {
  const superCluster = getSuperCluster();
  if (superCluster) {
    const grants = await revokeGrantsOfDeletedTenant(superCluster, tenant);
    await recordAudit({
      actorId: null,
      actorName: "Ring0",
      actorTenant: null,
      tenant,
      action: "share.revoke",
      targetKind: "tenant",
      target: tenant,
      result: "success",
      requestId: null,
      detail: { reason: "tenant deleted", revokedGrants: grants.length, grants },
    });
    if (grants.length > 0) log.info("deleted tenant's grants revoked", { tenant, grants });
  } else {
    log.warn("super cluster not connected: the deleted tenant's grants were not revoked", { tenant });
  }
  const detail = await createTenantRepository(getDb()).forgetAccess(tenant, new Date());
  await recordAudit({
    actorId: null,
    actorName: "Ring0",
    actorTenant: null,
    tenant,
    action: "tenant.deleted",
    targetKind: "tenant",
    target: tenant,
    result: "success",
    requestId: null,
    detail,
  });
  log.info("tenant's control plane removed; its tokens, memberships and accounts are gone", {
    tenant,
    ...detail,
  });
}

/** Tenant objects from the shared informer, held open for the life of the process. */
export function informerTenantSource(superCluster: ClusterConnection) {
  const informer = tenantInformer(superCluster);
  const release = informer.subscribe(() => {});
  // Every gateway request looks its tenant up here: once synced, answer from memory without a wait.
  let isSynced = false;
  void informer.synced().then(() => {
    isSynced = true;
  });
  return {
    release,
    async find(tenant: string) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const synced =
        isSynced ||
        (await Promise.race([
          informer.synced().then(() => true),
          new Promise<false>((resolve) => {
            timer = setTimeout(() => resolve(false), syncWaitMs);
          }),
        ]));
      clearTimeout(timer);
      if (!synced) {
        const cause = informer.lastError()?.message;
        return { error: `Ring0 cannot read its tenants from the super cluster${cause ? `: ${cause}` : ""}.` };
      }
      const resource = informer
        .snapshot()
        .find((candidate: TenantResource) => candidate.metadata.name === tenant);
      return { resource };
    },
  };
}

/** A tenant the embedded world starts with (the embedded IAM's seed tenants). */
export interface SeedTenant {
  name: string;
  displayName: string;
  admins: string[];
}

/** The seed file's tenants (all but the operators'), with their admins, for the demo world. */
export function seedTenantsFrom(
  logins: { username: string; tenant: string; role: string }[],
  operatorTenant: string,
): SeedTenant[] {
  const byName = new Map<string, SeedTenant>();
  for (const login of logins) {
    if (login.tenant === operatorTenant) continue;
    const seed = byName.get(login.tenant) ?? {
      name: login.tenant,
      displayName: login.tenant.charAt(0).toUpperCase() + login.tenant.slice(1),
      admins: [],
    };
    if (login.role.split(/[\s,]+/).includes("tenant-admin")) seed.admins.push(login.username);
    byName.set(login.tenant, seed);
  }
  return [...byName.values()];
}

/** Creates each seed tenant that does not exist yet (a deleted one stays deleted until the next start). */
async function createSeedTenants(superCluster: ClusterConnection, seeds: SeedTenant[], log: Logger) {
  for (const seed of seeds) {
    try {
      await createObject(superCluster, {
        apiVersion: tenantApiVersion,
        kind: tenantKind,
        metadata: {
          name: seed.name,
          labels: { "app.kubernetes.io/managed-by": "ring0" },
          annotations: { "ring0.dev/created-by": "Ring0 (seed tenant)" },
        },
        spec: { displayName: seed.displayName, admins: seed.admins },
      });
      log.info("seed tenant created", { tenant: seed.name });
    } catch (error) {
      if (!isAlreadyExists(error)) log.warn("creating a seed tenant failed", { tenant: seed.name, error });
    }
  }
}

export async function startTenants(
  config: Env,
  superCluster: ClusterConnection | null,
  log: Logger,
  options: { seedTenants?: SeedTenant[] } = {},
): Promise<{
  provisioners: Partial<Record<ProvisionerName, Provisioner>>;
  /** Leading ends (the controllers and the syncer stop) and the Lease goes; the rest keeps serving. */
  stepDown(): Promise<void>;
  stop(): Promise<void>;
}> {
  if (!superCluster) {
    setControlPlaneDirectory(null);
    return { provisioners: {}, stepDown: async () => {}, stop: async () => {} };
  }
  // The vn-agent PKI (the webhooks' too): Ring0 in a cluster keeps it in a Secret of its namespace,
  // shared by every replica (a new leader issues nothing); one machine keeps it in the state dir.
  const inCluster = config.RING0_SUPER_CLUSTER === "in-cluster" && !config.SUPER_KUBECONFIG;
  const webhookService = inCluster ? await inClusterWebhookService(config, superCluster, log) : undefined;
  const vnAgentPki: VnAgentPkiSource = inCluster
    ? {
        superCluster,
        namespace: ring0Namespace(config),
        ...(webhookService ? { serving: webhookService.serving } : {}),
      }
    : config.stateDir;
  const provisioners: Partial<Record<ProvisionerName, Provisioner>> = {
    local: createLocalProvisioner({
      stateDir: config.stateDir,
      logger: log,
      goGc: config.RING0_CONTROL_PLANE_GOGC,
      egress: {
        policy: createEgressPolicy({
          superCluster: () => superCluster,
          allow: config.RING0_TENANT_EGRESS_ALLOW
            ? parseEgressAllowances(config.RING0_TENANT_EGRESS_ALLOW)
            : [],
        }),
        onRefused: auditedRefusals(),
      },
    }),
    kubernetes: createKubernetesProvisioner({
      superCluster,
      logger: log,
      etcdStorage: etcdStorage(config),
      goGc: config.RING0_CONTROL_PLANE_GOGC,
      // Each API server's kubelet client certificate: Ring0's webhooks know it by it, and the
      // vn-agents let it through (kubectl logs, exec); in the local world with real nodes, API
      // servers in pods reach the agents on the pod API address.
      vnAgentPki,
      // Ring0's authorization webhook where API servers in pods reach the webhooks (the pod API
      // address in the local world, the webhooks' Service in a cluster).
      authorizationWebhookUrl: podAuthorizationUrl,
      ...(realNodesHere(config) ? { kubeletHost: POD_API_ADDRESS } : {}),
    }),
  };
  const tenants = informerTenantSource(superCluster);
  const directory = createControlPlaneDirectory({
    tenants,
    provisioners,
    defaultProvisioner: config.RING0_DEFAULT_PROVISIONER,
  });
  setControlPlaneDirectory(directory);

  try {
    await serverSideApply(superCluster, ring0SystemNamespace);
  } catch (error) {
    log.error(`creating the ${controllersNamespace} namespace failed; the tenant controller waits for it`, {
      error,
    });
  }

  if (options.seedTenants?.length) await createSeedTenants(superCluster, options.seedTenants, log);

  // Admission webhooks (server/admission): tenant quotas enforced where tenants act. Every replica
  // serves them; the tenant reconciler registers them in each tenant control plane with a quota.
  let admission: Awaited<ReturnType<typeof startAdmission>> | null = null;
  // Tenants' default namespace shares (issue 7), read from the database at most every 10 s per tenant.
  const namespaceDefaultShare = cachedDefaultShares({ ttlMs: 10_000 });
  try {
    admission = await startAdmission({
      stateDir: config.stateDir,
      pki: vnAgentPki,
      // Ring0 in a cluster: API servers in pods call the webhooks through the chart's Service.
      ...(webhookService && config.RING0_WEBHOOK_PORT && config.RING0_POD_IP
        ? {
            inCluster: {
              port: config.RING0_WEBHOOK_PORT,
              podIp: config.RING0_POD_IP,
              serviceUrl: webhookService.url,
            },
          }
        : {}),
      // Control planes in pods reach the webhooks on the pod API address.
      ...(realNodesHere(config) ? { podApiAddress: POD_API_ADDRESS } : {}),
      tenants,
      directory,
      logger: log,
      namespaceDefaultShare,
    });
  } catch (error) {
    // In a cluster the Service sends every replica a share of the calls: one without them fails.
    if (webhookService) throw error;
    log.error("starting the admission webhooks failed: tenant quotas are not enforced at admission", {
      error,
    });
  }

  const elector = createLeaderElector(superCluster, {
    namespace: controllersNamespace,
    name: "ring0-controllers",
    logger: log.child({ component: "leader" }),
    async onStartedLeading(signal) {
      log.info("leading: starting the tenant controller and the syncer");
      const running = startTenantController(superCluster, {
        superCluster,
        provisioners,
        defaultProvisioner: config.RING0_DEFAULT_PROVISIONER,
        logger: log,
        onDeleted: (tenant) => forgetDeletedTenant(tenant, log),
      });
      // The syncer (server/syncer): tenant pods onto the super cluster's nodes, status back up.
      // Not awaited: it waits for the super cluster's first lists, and losing the lease meanwhile must still stop it.
      // On the local super cluster kwok serves a pod's logs and exec only when it is labelled for it.
      const localWorld = !config.SUPER_KUBECONFIG && config.RING0_SUPER_CLUSTER === "local";
      // Tenants' pods on this host's real nodes ask their DNS of Ring0 (server/cluster/real-node/pod-dns.ts).
      const realNodes = localWorld && hasPodApiAddress();
      const podDns = realNodes ? await startTenantPodDns(superCluster, log) : null;
      // Which tenants' pods may reach which (the host wall's, or the NetworkPolicies' below).
      const trafficAllowances = parseTrafficAllowances(config.RING0_TENANT_TRAFFIC_ALLOW);
      // The wall between tenants' pods (server/cluster/real-node/tenant-wall.ts).
      const wall = realNodes
        ? await startTenantWall({
            superCluster,
            logger: log,
            allowances: trafficAllowances,
          }).catch((error: unknown) => {
            log.error("keeping the wall between tenants' pods failed: new pods reach no other pod", {
              error,
            });
            return null;
          })
        : null;
      const syncer = createSyncer({
        superCluster,
        directory,
        logger: log,
        superPodLabels: localWorld ? { [SIMULATED_POD_LABEL]: "true" } : undefined,
        podDns: podDns ? POD_API_ADDRESS : undefined,
        // A new namespace without a ResourceQuota gets the tenant's default share.
        namespaceDefaultShare,
        // Validated at start-up (server/env.ts); absent: every rule, NET_BIND_SERVICE only.
        isolationPolicy: config.RING0_ISOLATION_POLICY
          ? parseIsolationPolicy(config.RING0_ISOLATION_POLICY)
          : undefined,
        // Where this host's wall does not keep tenants' pods apart (Ring0 in a cluster, a super
        // cluster of the operator's), NetworkPolicies do (server/syncer/network-policies.ts).
        ...(boundaryOn(config, localWorld)
          ? {
              tenantBoundary: {
                admits: (tenant: string) =>
                  trafficAllowances.filter(([, to]) => to === tenant).map(([from]) => from),
                podRanges: parseCidrList(config.RING0_POD_CIDRS ?? ""),
                egressBlock: parseCidrList(config.RING0_POD_EGRESS_BLOCK ?? ""),
                egressAllow: parseCidrList(config.RING0_POD_EGRESS_ALLOW ?? ""),
              },
            }
          : {}),
      });
      void syncer.start().catch((error) => log.error("starting the syncer failed", { error }));
      setSyncer(syncer);
      // Local volumes for claims on this host's real nodes (server/cluster/real-node/volumes.ts).
      const volumes = localWorld
        ? startLocalVolumes({ superCluster, stateDir: config.stateDir, logger: log })
        : null;
      // Quota history for the portal's charts (server/quotas/sampler.ts).
      const sampler = startQuotaSampler({
        tenants: () => tenantInformer(superCluster).snapshot(),
        intervalMs: config.RING0_QUOTA_SAMPLE_SECONDS * 1_000,
        retentionMs: config.RING0_QUOTA_RETENTION_DAYS * 86_400_000,
        logger: log,
      });
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      sampler.stop();
      volumes?.stop();
      wall?.stop();
      await podDns?.close();
      setSyncer(null);
      await syncer.stop();
      await running.stop();
    },
  });
  elector.start();

  // vn-agents: the kubelet-API proxies tenant apiservers reach the super nodes through (server/vn-agent).
  let vnAgents: VnAgents | null = null;
  try {
    if (inCluster && typeof vnAgentPki !== "string") {
      // In a cluster the agents are the chart's DaemonSet (one pod beside each kubelet): Ring0 gives
      // each its serving certificate and points vNodes at it. Agents in this process would listen
      // on its loopback, where no API server in a pod reaches them.
      if (config.RING0_VN_AGENT_PORT) {
        vnAgents = await startNodeAgents({
          superCluster,
          namespace: ring0Namespace(config),
          pki: vnAgentPki,
          port: config.RING0_VN_AGENT_PORT,
          logger: log,
          issues: () => elector.isLeader(),
        });
      } else {
        log.warn(
          "no vn-agent DaemonSet (RING0_VN_AGENT_PORT is unset): kubectl logs and exec on tenant pods will not work",
        );
      }
    } else {
      // In the local world the simulated nodes' kubelet API wants the node PKI's client certificate.
      const localWorld = !config.SUPER_KUBECONFIG && config.RING0_SUPER_CLUSTER === "local";
      const kubeletTls = localWorld
        ? await localSuperCluster({ stateDir: config.stateDir, logger: log }).kubeletClient()
        : undefined;
      vnAgents = await startVnAgents({
        superCluster,
        stateDir: config.stateDir,
        pki: vnAgentPki,
        logger: log,
        kubeletTls,
        ...(realNodesHere(config) ? { alsoOn: [POD_API_ADDRESS] } : {}),
      });
      registerNodeLogProvider("vn-agent", vnAgentLogProvider);
    }
  } catch (error) {
    log.error("starting the vn-agents failed: kubectl logs/exec on tenant pods will not work", { error });
  }

  return {
    provisioners,
    stepDown: () => elector.stop(),
    async stop() {
      registerNodeLogProvider("vn-agent", null);
      await vnAgents?.stop();
      await elector.stop();
      await admission?.stop();
      tenants.release();
      setControlPlaneDirectory(null);
    },
  };
}

const SERVICE_ACCOUNT_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/** Ring0's own namespace in the super cluster: RING0_NAMESPACE, else its service account's. */
function ring0Namespace(config: Env): string {
  if (config.RING0_NAMESPACE) return config.RING0_NAMESPACE;
  try {
    return fs.readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, "utf8").trim() || RING0_SERVER_NAMESPACE;
  } catch {
    return RING0_SERVER_NAMESPACE;
  }
}

/**
 * The Service in front of every replica's webhooks (RING0_WEBHOOK_SERVICE, its port "webhooks"):
 * the URL API servers in pods call, and the names and address the webhooks' certificate must carry.
 * Undefined when it is not set. A Service that cannot be read (after a few tries) fails the start:
 * a replica without its webhooks would still get a share of their calls, which a Fail policy turns
 * into refused writes, and as leader it would take every tenant's webhooks away.
 */
async function inClusterWebhookService(
  config: Env,
  superCluster: ClusterConnection,
  log: Logger,
): Promise<{ url: string; serving: { ips: string[]; names: string[] } } | undefined> {
  const name = config.RING0_WEBHOOK_SERVICE;
  if (!name) return undefined;
  const namespace = ring0Namespace(config);
  for (let attempt = 1; ; attempt++) {
    try {
      const service = await readObject<
        KubeObject & { spec?: { clusterIP?: string; ports?: { name?: string; port: number }[] } }
      >(superCluster, { apiVersion: "v1", kind: "Service", metadata: { name, namespace } });
      const ip = service.spec?.clusterIP;
      const port = service.spec?.ports?.find((entry) => entry.name === "webhooks")?.port;
      if (!ip || ip === "None" || !port) {
        throw new Error(`Service ${namespace}/${name} has no cluster IP or no port named "webhooks"`);
      }
      return {
        url: `https://${isIPv6(ip) ? `[${ip}]` : ip}:${port}`,
        serving: {
          ips: [ip],
          names: [
            name,
            `${name}.${namespace}`,
            `${name}.${namespace}.svc`,
            `${name}.${namespace}.svc.cluster.local`,
          ],
        },
      };
    } catch (error) {
      if (attempt >= 5) {
        throw new Error(
          `the webhooks' Service ${namespace}/${name} (RING0_WEBHOOK_SERVICE) cannot be read: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      log.warn("reading the webhooks' Service failed; trying again", {
        service: `${namespace}/${name}`,
        error,
      });
      await new Promise((resolve) => setTimeout(resolve, 1_000 * attempt));
    }
  }
}

/** The local world with real nodes on this host (its pod API address is up). */
function realNodesHere(config: Env): boolean {
  return !config.SUPER_KUBECONFIG && config.RING0_SUPER_CLUSTER === "local" && hasPodApiAddress();
}

/**
 * Where control planes in pods keep etcd's data unless their Tenant says: the operator's claim; in
 * the local world with real nodes, 1Gi on Ring0's own local volumes; else an emptyDir.
 */
function etcdStorage(config: Env): EtcdStorage {
  const storageClassName =
    config.RING0_ETCD_STORAGE_CLASS ?? (realNodesHere(config) ? LOCAL_STORAGE_CLASS : undefined);
  const size = config.RING0_ETCD_STORAGE_SIZE ?? (storageClassName ? "1Gi" : undefined);
  if (!size) return { kind: "emptyDir" };
  return { kind: "persistentVolumeClaim", size, ...(storageClassName ? { storageClassName } : {}) };
}

/** The pods' DNS on the pod API address, or null (logged) when it cannot serve: pods keep the nodes' resolver. */
async function startTenantPodDns(superCluster: ClusterConnection, log: Logger): Promise<PodDns | null> {
  try {
    return await startPodDns({
      superCluster,
      logger: log,
      host: POD_API_ADDRESS,
      // Every tenant's pods on real nodes reach their own API server there (provisioners/local/pod-api.ts).
      podApi: () => POD_API_ADDRESS,
    });
  } catch (error) {
    log.error("starting the tenants' pod DNS failed: tenant pods resolve no Services", { error });
    return null;
  }
}

/** Whether NetworkPolicies are the wall between tenants' pods: asked for, or "auto" and no host wall (the local world's). */
function boundaryOn(config: Env, localWorld: boolean): boolean {
  return config.RING0_TENANT_BOUNDARY === "on" || (config.RING0_TENANT_BOUNDARY === "auto" && !localWorld);
}
