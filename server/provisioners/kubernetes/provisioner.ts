/**
 * The `kubernetes` provisioner: a tenant's control plane as pods in the super cluster, in a
 * namespace of its own (objects in ./manifests.ts, pod status in ./status.ts, PKI in ../pki.ts).
 *
 * `ensure` converges in a fixed order — namespace, PKI Secret (generated once, completed or renewed
 * leaf by leaf, CA never replaced), kubeconfig Secret, etcd, API server, controller manager — all by
 * server-side apply as field manager "ring0" (save the PKI Secret's first write: a create, so two
 * racing ensures agree on one CA), then reports what the pods say. Readiness comes from
 * the pods' Ready conditions; on the local super cluster kwok simulates those, and nothing actually
 * serves at the endpoint (`https://kube-apiserver.<namespace>.svc:6443`, reachable only from inside
 * a real super cluster).
 */
import { createObject, deleteObject, type KubeObject, readObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isAlreadyExists, isNotFound } from "@/server/k8s/errors";
import { NamespaceKind } from "@/server/k8s/kinds/namespace";
import { PodKind } from "@/server/k8s/kinds/pod";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import { type ControlPlanePki, ensurePki, pkiFiles, pkiFromFiles, pkiToFiles } from "../pki";
import {
  type ControlPlaneAccess,
  type ControlPlaneObservation,
  type ControlPlaneSpec,
  ControlPlaneSpecError,
  type Provisioner,
} from "../types";
import { availableVersions, resolveVersion } from "../versions";
import {
  APISERVER_NAME,
  CONTROL_PLANE_LABEL,
  CONTROLLER_MANAGER_NAME,
  type ControlPlaneImages,
  type ControlPlaneManifestOptions,
  controlPlaneEndpoint,
  controlPlaneNamespace,
  controlPlanePkiNames,
  controlPlaneWorkloadManifests,
  defaultImages,
  ETCD_NAME,
  type EtcdStorage,
  kubeconfigSecretManifest,
  MANAGED_BY_LABEL,
  namespaceManifest,
  PKI_SECRET,
  pkiChecksum,
  pkiSecretManifest,
  TENANT_LABEL,
} from "./manifests";
import { isPodReady, type Pod, podFailure, podWaitingFor } from "./status";

export interface KubernetesProvisionerOptions {
  superCluster: ClusterConnection;
  logger: Logger;
  image?: Partial<ControlPlaneImages>;
  /**
   * Where etcd keeps its data; default emptyDir, the only kind the local super cluster (kwok nodes,
   * no storage) can run. A real super cluster should pass a persistentVolumeClaim.
   */
  etcdStorage?: EtcdStorage;
  /** The super cluster's DNS domain, for the certificates' fully qualified names. */
  clusterDomain?: string;
  /** Exact versions with binaries (tests); default availableVersions(). */
  availableVersions?: () => string[];
  /** How long `destroy` waits for the namespace to disappear before leaving it Terminating. */
  destroyWaitMs?: number;
  now?: () => Date;
}

interface Workload extends KubeObject {
  spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
  };
}

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

interface Namespace extends KubeObject {
  status?: { phase?: string };
}

const tenantPattern = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function validateTenant(tenant: string): void {
  if (!tenantPattern.test(tenant)) {
    throw new ControlPlaneSpecError(
      `"${tenant}" cannot name a control plane: a tenant name is 1–63 lowercase letters, digits or "-", starting and ending with a letter or digit.`,
    );
  }
}

/** Whether a workload has rolled out its current spec and has every replica ready. */
function workloadReady(workload: Workload): boolean {
  const wanted = workload.spec?.replicas ?? 1;
  const status = workload.status ?? {};
  return (
    (status.observedGeneration ?? 0) >= (workload.metadata.generation ?? 0) &&
    (status.updatedReplicas ?? 0) >= wanted &&
    (status.readyReplicas ?? 0) >= wanted &&
    (status.replicas ?? 0) === wanted
  );
}

function decode(data: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data ?? {}).map(([key, value]) => [key, Buffer.from(value, "base64").toString("utf8")]),
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createKubernetesProvisioner(options: KubernetesProvisionerOptions): Provisioner {
  const conn = options.superCluster;
  const log = options.logger.child({ component: "provisioner", provisioner: "kubernetes" });
  const images: ControlPlaneImages = { ...defaultImages, ...options.image };
  const etcdStorage: EtcdStorage = options.etcdStorage ?? { kind: "emptyDir" };
  const clusterDomain = options.clusterDomain ?? "cluster.local";
  const versions = options.availableVersions ?? (() => availableVersions());
  const now = options.now ?? (() => new Date());
  const destroyWaitMs = options.destroyWaitMs ?? 60_000;

  const readNamespace = async (tenant: string): Promise<Namespace | undefined> => {
    try {
      return await readObject<Namespace>(conn, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: controlPlaneNamespace(tenant) },
      });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };

  const readInNamespace = async <T extends KubeObject>(
    tenant: string,
    apiVersion: string,
    kind: string,
    name: string,
  ): Promise<T | undefined> => {
    try {
      return await readObject<T>(conn, {
        apiVersion,
        kind,
        metadata: { name, namespace: controlPlaneNamespace(tenant) },
      });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };

  /** The PKI from its Secret, completed (and renewed) if needed; a CA once stored is never replaced. */
  const ensurePkiSecret = async (tenant: string, attempt = 0): Promise<ControlPlanePki> => {
    const stored = await readInNamespace<Secret>(tenant, "v1", "Secret", PKI_SECRET);
    const existing = pkiFromFiles(decode(stored?.data));
    const { pki, issued } = await ensurePki(controlPlanePkiNames(tenant, clusterDomain), existing, now());
    if (!stored) {
      log.info("generating control plane PKI", { tenant });
      try {
        // Create, not apply: of two racing ensures exactly one CA wins, and the other adopts it.
        await createObject(conn, pkiSecretManifest(tenant, pkiToFiles(pki)));
      } catch (error) {
        if (!isAlreadyExists(error) || attempt > 0) throw error;
        return ensurePkiSecret(tenant, attempt + 1);
      }
    } else if (issued.length > 0) {
      // Built on what was just read: the CAs in it are kept, only leaves are (re)issued.
      log.info("renewing control plane certificates", { tenant, issued });
      await serverSideApply(conn, pkiSecretManifest(tenant, pkiToFiles(pki)), { force: true });
    }
    return pki;
  };

  const observe = async (tenant: string): Promise<ControlPlaneObservation> => {
    const namespace = await readNamespace(tenant);
    if (!namespace) return { phase: "Absent" };
    const name = namespace.metadata.name;
    if (namespace.metadata.deletionTimestamp || namespace.status?.phase === "Terminating") {
      return { phase: "Stopped", message: `Terminating: namespace ${name} is being deleted.` };
    }
    const [etcd, apiserver, controllerManager] = await Promise.all([
      readInNamespace<Workload>(tenant, "apps/v1", "StatefulSet", ETCD_NAME),
      readInNamespace<Workload>(tenant, "apps/v1", "Deployment", APISERVER_NAME),
      readInNamespace<Workload>(tenant, "apps/v1", "Deployment", CONTROLLER_MANAGER_NAME),
    ]);
    const missing = [
      etcd ? undefined : `StatefulSet ${ETCD_NAME}`,
      apiserver ? undefined : `Deployment ${APISERVER_NAME}`,
      controllerManager ? undefined : `Deployment ${CONTROLLER_MANAGER_NAME}`,
    ].filter((entry): entry is string => entry !== undefined);
    if (!etcd || !apiserver || !controllerManager) {
      return {
        phase: "Failed",
        message: `${missing.join(", ")} missing in namespace ${name}; the next ensure recreates it.`,
      };
    }
    const image = apiserver.spec?.template?.spec?.containers?.[0]?.image ?? "";
    const version = /:(v\d+\.\d+\.\d+)$/.exec(image)?.[1];
    const pods = (
      await kubeRequest<{ items: Pod[] }>(conn, {
        path: PodKind.path({ namespace: name }),
        query: { labelSelector: `${MANAGED_BY_LABEL}=ring0,${TENANT_LABEL}=${tenant}` },
      })
    ).items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

    const failure = pods.map(podFailure).find((message) => message !== undefined);
    if (failure) return { phase: "Failed", message: `${failure}.` };

    if ((apiserver.spec?.replicas ?? 1) === 0 && (controllerManager.spec?.replicas ?? 1) === 0) {
      const stopping = pods.filter((pod) => !pod.metadata.name.startsWith(`${ETCD_NAME}-`));
      return {
        phase: "Stopped",
        message:
          stopping.length > 0
            ? `Suspended: ${stopping.length} API server/controller manager pod(s) still shutting down.`
            : "Suspended: the API server and controller manager are scaled to 0; etcd data is kept.",
      };
    }

    const notReady = [etcd, apiserver, controllerManager].filter((workload) => !workloadReady(workload));
    if (notReady.length > 0) {
      const waiting = pods.filter((pod) => !isPodReady(pod)).map(podWaitingFor);
      const names = notReady.map((workload) => workload.metadata.name).join(", ");
      return {
        phase: "Starting",
        message: `Waiting for ${names} to be ready${waiting.length > 0 ? `: ${waiting.join("; ")}` : " (pods not created yet)"}.`,
        ...(version ? { version } : {}),
      };
    }
    return { phase: "Running", endpoint: controlPlaneEndpoint(tenant), ...(version ? { version } : {}) };
  };

  return {
    name: "kubernetes",

    async ensure(spec: ControlPlaneSpec, signal?: AbortSignal): Promise<ControlPlaneObservation> {
      validateTenant(spec.tenant);
      const version = resolveVersion(spec.version, versions());
      const { tenant } = spec;
      const namespace = await readNamespace(tenant);
      if (namespace?.metadata.deletionTimestamp) {
        throw new Error(
          `The control plane of ${tenant} is still being deleted (namespace ${namespace.metadata.name} is terminating); try again once it is gone.`,
        );
      }
      signal?.throwIfAborted();
      await serverSideApply(conn, namespaceManifest(tenant), { force: true });
      const pki = await ensurePkiSecret(tenant);
      signal?.throwIfAborted();
      await serverSideApply(conn, kubeconfigSecretManifest(tenant, pki), { force: true });
      const manifestOptions: ControlPlaneManifestOptions = {
        tenant,
        version,
        suspended: spec.suspended,
        images,
        etcdStorage,
        clusterDomain,
        pkiChecksum: pkiChecksum(pkiToFiles(pki)),
      };
      for (const manifest of controlPlaneWorkloadManifests(manifestOptions)) {
        signal?.throwIfAborted();
        await serverSideApply(conn, manifest, { force: true });
      }
      log.debug("control plane applied", { tenant, version, suspended: spec.suspended });
      return observe(tenant);
    },

    observe,

    async access(tenant: string): Promise<ControlPlaneAccess | undefined> {
      const namespace = await readNamespace(tenant);
      if (!namespace || namespace.metadata.deletionTimestamp) return undefined;
      const secret = await readInNamespace<Secret>(tenant, "v1", "Secret", PKI_SECRET);
      const files = decode(secret?.data);
      const ca = files[pkiFiles.caCert];
      const cert = files[pkiFiles.adminCert];
      const key = files[pkiFiles.adminKey];
      if (!ca || !cert || !key) return undefined;
      return { server: controlPlaneEndpoint(tenant), ca, cert, key };
    },

    async destroy(tenant: string): Promise<void> {
      const name = controlPlaneNamespace(tenant);
      const ref = { apiVersion: "v1", kind: "Namespace", metadata: { name } };
      const existing = await readNamespace(tenant);
      if (!existing) return;
      if (existing.metadata.labels?.[TENANT_LABEL] !== tenant) {
        throw new Error(
          `Namespace ${name} is not the control plane of tenant ${tenant}; refusing to delete it.`,
        );
      }
      if (!existing.metadata.deletionTimestamp) {
        log.info("deleting control plane namespace", { tenant, namespace: name });
        await deleteObject(conn, ref, { propagationPolicy: "Foreground" });
      }
      const deadline = Date.now() + destroyWaitMs;
      while (Date.now() < deadline) {
        if (!(await readNamespace(tenant))) return;
        await sleep(250);
      }
      log.info("control plane namespace still terminating", { tenant, namespace: name });
    },

    async list(): Promise<string[]> {
      const namespaces = await kubeRequest<{ items: Namespace[] }>(conn, {
        path: NamespaceKind.path(),
        query: {
          labelSelector: `${MANAGED_BY_LABEL}=ring0,${CONTROL_PLANE_LABEL}=kubernetes,${TENANT_LABEL}`,
        },
      });
      return (
        namespaces.items
          .map((namespace) => [namespace.metadata.name, namespace.metadata.labels?.[TENANT_LABEL]] as const)
          // Only namespaces whose name is the one this provisioner derives for the labelled tenant.
          .filter(
            (entry): entry is readonly [string, string] =>
              !!entry[1] && controlPlaneNamespace(entry[1]) === entry[0],
          )
          .map(([, tenant]) => tenant)
          .sort()
      );
    },
  };
}

export type { EtcdStorage } from "./manifests";
