/**
 * The `kubernetes` provisioner: a tenant's control plane as pods in the super cluster, in a
 * namespace of its own (objects in ./manifests.ts, pod status in ./status.ts, PKI in ../pki.ts).
 *
 * `ensure` converges in a fixed order — namespace, Services (their cluster IPs are what everything
 * dials), PKI Secret (generated once, completed or renewed leaf by leaf, CA never replaced; its
 * serving certificates name those IPs), kubeconfig Secret, etcd, API server, controller manager — all
 * by server-side apply as field manager "ring0" (save the PKI Secret's first write: a create, so two
 * racing ensures agree on one CA), then reports what the pods say. Readiness comes from the pods'
 * Ready conditions. Ring0 reaches the API server at its Service's cluster IP (`https://<ip>:6443`):
 * from inside the super cluster, or from a host with its kube-proxy (the local world's real nodes);
 * on the local super cluster's simulated nodes kwok only marks the pods ready and nothing serves.
 * The tenant's own pods dial the same address (`podEndpoint`).
 */

import { createObject, deleteObject, type KubeObject, readObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isAlreadyExists, isNotFound } from "@/server/k8s/errors";
import { NamespaceKind } from "@/server/k8s/kinds/namespace";
import { PodKind } from "@/server/k8s/kinds/pod";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import { certificateStillGood, ensureVnAgentPki, type VnAgentPkiSource } from "@/server/vn-agent/pki";
import { DEFAULT_CONTROL_PLANE_GOGC } from "../go-runtime";
import { type ControlPlanePki, ensurePki, pkiFiles, pkiFromFiles, pkiToFiles } from "../pki";
import { readyzProblem, unresponsiveFault } from "../readyz";
import {
  type ControlPlaneAccess,
  type ControlPlaneFault,
  type ControlPlaneObservation,
  type ControlPlaneSpec,
  ControlPlaneSpecError,
  type Provisioner,
} from "../types";
import { availableVersions, resolveVersion } from "../versions";
import {
  APISERVER_NAME,
  APISERVER_PORT,
  authorizationKubeconfig,
  CONTROL_PLANE_LABEL,
  CONTROL_PLANE_NAME_LABEL,
  CONTROLLER_MANAGER_NAME,
  type ControlPlaneAddresses,
  type ControlPlaneImages,
  type ControlPlaneManifestOptions,
  controlPlaneNamespace,
  controlPlanePkiNames,
  controlPlaneServiceManifests,
  controlPlaneUrl,
  controlPlaneWorkloadManifests,
  defaultImages,
  ETCD_CLIENT_SERVICE,
  ETCD_NAME,
  type EtcdStorage,
  KUBECONFIG_SECRET,
  KUBELET_CLIENT_SECRET,
  kubeconfigSecretManifest,
  kubeletClientFiles,
  kubeletClientSecretManifest,
  MANAGED_BY_LABEL,
  namespaceManifest,
  PKI_SECRET,
  pkiSecretManifest,
  TENANT_LABEL,
} from "./manifests";
import { componentExited, isPodReady, type Pod, podFailure, podWaitingFor } from "./status";

export interface KubernetesProvisionerOptions {
  superCluster: ClusterConnection;
  logger: Logger;
  image?: Partial<ControlPlaneImages>;
  /**
   * Where etcd keeps its data unless the Tenant says (spec.storage); default emptyDir, the only kind
   * the local super cluster's simulated nodes can run. A real super cluster should pass a
   * persistentVolumeClaim (RING0_ETCD_STORAGE_SIZE / _CLASS).
   */
  etcdStorage?: EtcdStorage;
  /** GOGC of every control-plane container (../go-runtime.ts); default DEFAULT_CONTROL_PLANE_GOGC. */
  goGc?: number;
  /**
   * Where the vn-agent PKI is kept (Ring0's state dir, or its Secret for Ring0 in a cluster): the
   * API server then gets a kubelet client certificate, which Ring0's webhooks know it by, and
   * reaches kubelets through the vn-agents (kubectl logs, exec, port-forward) at `kubeletHost`.
   */
  vnAgentPki?: VnAgentPkiSource;
  /** Where API servers in pods reach the vn-agents (the pod API address in the local world). */
  kubeletHost?: string;
  /**
   * Where API servers in pods reach Ring0's authorization webhook (tenant admins in the groups of
   * their own CRDs, before RBAC catches up), when they can; read at every reconcile (a new address
   * rolls the API server). Needs `vnAgentPki` (the webhook knows the API server by its certificate).
   */
  authorizationWebhookUrl?: () => string | undefined;
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

interface EtcdStatefulSet extends KubeObject {
  spec?: {
    volumeClaimTemplates?: {
      spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } };
    }[];
  };
}

/** etcd's claim when a Tenant names only a StorageClass and the operator set no size. */
const DEFAULT_ETCD_SIZE = "1Gi";

/** The storage an existing etcd StatefulSet was made with (its claim template cannot change). */
function storageOf(etcd: EtcdStatefulSet): EtcdStorage {
  const claim = etcd.spec?.volumeClaimTemplates?.[0]?.spec;
  if (!claim) return { kind: "emptyDir" };
  return {
    kind: "persistentVolumeClaim",
    size: claim.resources?.requests?.storage ?? DEFAULT_ETCD_SIZE,
    ...(claim.storageClassName ? { storageClassName: claim.storageClassName } : {}),
  };
}

interface Service extends KubeObject {
  spec?: { clusterIP?: string };
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
  const ensurePkiSecret = async (
    tenant: string,
    addresses: ControlPlaneAddresses,
    attempt = 0,
  ): Promise<ControlPlanePki> => {
    const stored = await readInNamespace<Secret>(tenant, "v1", "Secret", PKI_SECRET);
    const existing = pkiFromFiles(decode(stored?.data));
    const names = controlPlanePkiNames(tenant, clusterDomain, addresses);
    const { pki, issued } = await ensurePki(names, existing, now());
    if (!stored) {
      log.info("generating control plane PKI", { tenant });
      try {
        // Create, not apply: of two racing ensures exactly one CA wins, and the other adopts it.
        await createObject(conn, pkiSecretManifest(tenant, pkiToFiles(pki)));
      } catch (error) {
        if (!isAlreadyExists(error) || attempt > 0) throw error;
        return ensurePkiSecret(tenant, addresses, attempt + 1);
      }
    } else if (issued.length > 0) {
      // Built on what was just read: the CAs in it are kept, only leaves are (re)issued.
      log.info("renewing control plane certificates", { tenant, issued });
      await serverSideApply(conn, pkiSecretManifest(tenant, pkiToFiles(pki)), { force: true });
    }
    return pki;
  };

  /**
   * The API server's kubelet client certificate in its Secret, (re)issued from the vn-agent client
   * CA when missing, near expiry or from another CA; undefined without vn-agents.
   */
  const ensureKubeletClient = async (tenant: string) => {
    if (!options.vnAgentPki) return undefined;
    const agents = await ensureVnAgentPki(options.vnAgentPki);
    const stored = decode(
      (await readInNamespace<Secret>(tenant, "v1", "Secret", KUBELET_CLIENT_SECRET))?.data,
    );
    const current = {
      cert: stored[kubeletClientFiles.cert] ?? "",
      key: stored[kubeletClientFiles.key] ?? "",
      ca: stored[kubeletClientFiles.ca] ?? "",
    };
    const url = options.authorizationWebhookUrl?.();
    const authorization = url ? authorizationKubeconfig(url) : undefined;
    const certificateGood =
      current.cert &&
      current.key &&
      current.ca === agents.servingCa.cert &&
      (await certificateStillGood({ cert: current.cert, key: current.key }, agents.clientCa, now()));
    const files = certificateGood
      ? { ...current, ...(authorization ? { authorization } : {}) }
      : await agents.issueTenantKubeletClient(tenant).then((issued) => ({
          cert: issued.cert,
          key: issued.key,
          ca: agents.servingCa.cert,
          ...(authorization ? { authorization } : {}),
        }));
    const secretGood =
      certificateGood &&
      stored[kubeletClientFiles.webhookKubeconfig] &&
      stored[kubeletClientFiles.authorizationKubeconfig] === authorization;
    if (!secretGood) await serverSideApply(conn, kubeletClientSecretManifest(tenant, files), { force: true });
    return files;
  };

  /** The cluster IPs of the API server's and etcd's Services, once both have one. */
  const readAddresses = async (tenant: string): Promise<ControlPlaneAddresses | undefined> => {
    const [apiserver, etcd] = await Promise.all([
      readInNamespace<Service>(tenant, "v1", "Service", APISERVER_NAME),
      readInNamespace<Service>(tenant, "v1", "Service", ETCD_CLIENT_SERVICE),
    ]);
    const ip = (service: Service | undefined) => {
      const address = service?.spec?.clusterIP;
      return address && address !== "None" ? address : undefined;
    };
    const addresses = { apiserver: ip(apiserver), etcd: ip(etcd) };
    return addresses.apiserver && addresses.etcd
      ? { apiserver: addresses.apiserver, etcd: addresses.etcd }
      : undefined;
  };

  /**
   * etcd's storage: what its StatefulSet was made with once it exists (a claim template is fixed);
   * before that the Tenant's own claim over the defaults.
   */
  const storageFor = async (spec: ControlPlaneSpec): Promise<EtcdStorage> => {
    const existing = await readInNamespace<EtcdStatefulSet>(spec.tenant, "apps/v1", "StatefulSet", ETCD_NAME);
    if (existing) return storageOf(existing);
    const wanted = spec.storage;
    if (!wanted?.size && !wanted?.storageClassName) return etcdStorage;
    const defaults = etcdStorage.kind === "persistentVolumeClaim" ? etcdStorage : undefined;
    const storageClassName = wanted.storageClassName ?? defaults?.storageClassName;
    return {
      kind: "persistentVolumeClaim",
      size: wanted.size ?? defaults?.size ?? DEFAULT_ETCD_SIZE,
      ...(storageClassName ? { storageClassName } : {}),
    };
  };

  /** The control plane's pods (of this tenant, by Ring0's labels), by name. */
  const listPods = async (tenant: string): Promise<Pod[]> =>
    (
      await kubeRequest<{ items: Pod[] }>(conn, {
        path: PodKind.path({ namespace: controlPlaneNamespace(tenant) }),
        query: { labelSelector: `${MANAGED_BY_LABEL}=ring0,${TENANT_LABEL}=${tenant}` },
      })
    ).items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

  const access = async (tenant: string): Promise<ControlPlaneAccess | undefined> => {
    const namespace = await readNamespace(tenant);
    if (!namespace || namespace.metadata.deletionTimestamp) return undefined;
    const secret = await readInNamespace<Secret>(tenant, "v1", "Secret", PKI_SECRET);
    const files = decode(secret?.data);
    const ca = files[pkiFiles.caCert];
    const cert = files[pkiFiles.adminCert];
    const key = files[pkiFiles.adminKey];
    const addresses = await readAddresses(tenant);
    if (!ca || !cert || !key || !addresses) return undefined;
    return {
      server: controlPlaneUrl(addresses),
      ca,
      cert,
      key,
      // The tenant's pods dial the same Service (its certificate names the address).
      podEndpoint: { host: addresses.apiserver, port: APISERVER_PORT },
      ...(options.vnAgentPki && options.kubeletHost ? { kubeletHost: options.kubeletHost } : {}),
    };
  };

  /** Tenants whose API server answered a probe's /readyz (see probe). */
  const answered = new Set<string>();
  /** access() for probes, kept 30 s: a probe a second need not read a Secret and two Services. */
  const probeAccesses = new Map<string, { access: ControlPlaneAccess; at: number }>();
  const probeAccess = async (tenant: string): Promise<ControlPlaneAccess | undefined> => {
    const cached = probeAccesses.get(tenant);
    if (cached && Date.now() - cached.at < 30_000) return cached.access;
    const fresh = await access(tenant);
    if (fresh) probeAccesses.set(tenant, { access: fresh, at: Date.now() });
    else probeAccesses.delete(tenant);
    if (probeAccesses.size > 10_000) probeAccesses.clear();
    return fresh;
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
    const pods = await listPods(tenant);

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
    const addresses = await readAddresses(tenant);
    if (!addresses) {
      return {
        phase: "Failed",
        message: `Service ${APISERVER_NAME} or ${ETCD_CLIENT_SERVICE} has no cluster IP in namespace ${name}; the next ensure recreates it.`,
      };
    }
    return { phase: "Running", endpoint: controlPlaneUrl(addresses), ...(version ? { version } : {}) };
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
      for (const manifest of controlPlaneServiceManifests(tenant))
        await serverSideApply(conn, manifest, { force: true });
      const addresses = await readAddresses(tenant);
      if (!addresses) {
        throw new Error(
          `The super cluster gave the Services of ${tenant}'s control plane no cluster IP; is its service range full?`,
        );
      }
      const pki = await ensurePkiSecret(tenant, addresses);
      signal?.throwIfAborted();
      const kubeconfigs = kubeconfigSecretManifest(tenant, pki, controlPlaneUrl(addresses)) as KubeObject & {
        data: Record<string, string>;
      };
      await serverSideApply(conn, kubeconfigs, { force: true });
      const kubeletClient = await ensureKubeletClient(tenant);
      const manifestOptions: ControlPlaneManifestOptions = {
        tenant,
        version,
        suspended: spec.suspended,
        images,
        etcdStorage: await storageFor(spec),
        clusterDomain,
        addresses,
        kubeletClient: kubeletClient !== undefined,
        authorizationWebhook: kubeletClient?.authorization !== undefined,
        goGc: options.goGc ?? DEFAULT_CONTROL_PLANE_GOGC,
        secretFiles: {
          [PKI_SECRET]: pkiToFiles(pki),
          ...(kubeletClient
            ? {
                [KUBELET_CLIENT_SECRET]: {
                  [kubeletClientFiles.cert]: kubeletClient.cert,
                  [kubeletClientFiles.ca]: kubeletClient.ca,
                  ...(kubeletClient.authorization
                    ? { [kubeletClientFiles.authorizationKubeconfig]: kubeletClient.authorization }
                    : {}),
                },
              }
            : {}),
          [KUBECONFIG_SECRET]: decode(kubeconfigs.data),
        },
      };
      for (const manifest of controlPlaneWorkloadManifests(manifestOptions)) {
        signal?.throwIfAborted();
        await serverSideApply(conn, manifest, { force: true });
      }
      // A component that stopped answering: its pods go now (their controllers make new ones). Never
      // an etcd whose data is an emptyDir (its pod's end is its data's), and etcd gracefully: a
      // StatefulSet's one-pod-at-a-time holds only for pods that were let finish.
      const restart = new Set(spec.suspended ? [] : (spec.restart ?? []));
      if (manifestOptions.etcdStorage.kind === "emptyDir" && restart.delete(ETCD_NAME)) {
        log.warn("not restarting etcd: its data is an emptyDir and would be lost", { tenant });
      }
      for (const pod of restart.size > 0 ? await listPods(tenant) : []) {
        const component = pod.metadata.labels?.[CONTROL_PLANE_NAME_LABEL] ?? "";
        if (!restart.has(component) || pod.metadata.deletionTimestamp) continue;
        log.info("restarting a control plane component that does not answer", {
          tenant,
          pod: pod.metadata.name,
        });
        await deleteObject(
          conn,
          {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: pod.metadata.name, namespace: controlPlaneNamespace(tenant) },
          },
          component === ETCD_NAME ? {} : { gracePeriodSeconds: 0 },
        );
      }
      log.debug("control plane applied", { tenant, version, suspended: spec.suspended });
      return observe(tenant);
    },

    observe,

    access,

    /**
     * A component whose container ended and none of whose pods is ready (componentExited), else an
     * API server this Ring0 has reached before whose /readyz does not answer in 1.5 s. One list of
     * pods and one /readyz per probe (the admin access behind it kept 30 s); nothing while no API
     * server or controller manager pod exists (suspended, or being made).
     */
    async probe(tenant: string): Promise<ControlPlaneFault | undefined> {
      let pods: Pod[];
      try {
        pods = await listPods(tenant);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
      const named = (component: string) =>
        pods.some((pod) => pod.metadata.labels?.[CONTROL_PLANE_NAME_LABEL] === component);
      if (!named(APISERVER_NAME) && !named(CONTROLLER_MANAGER_NAME)) return undefined;
      for (const component of [ETCD_NAME, APISERVER_NAME, CONTROLLER_MANAGER_NAME]) {
        const down = componentExited(pods, component, CONTROL_PLANE_NAME_LABEL, now());
        if (down) return { component, kind: "exited", message: `${component} is not running`, detail: down };
      }
      const reach = await probeAccess(tenant);
      if (!reach) return undefined;
      const problem = await readyzProblem(reach, 1_500);
      if (!problem) {
        answered.add(tenant);
        return undefined;
      }
      // Only an API server this Ring0 has reached before is called unresponsive: one it never
      // reached (no route to cluster IPs here, or pods kwok only pretends to run) is not a
      // fault of the tenant's, and restarting it would loop.
      return answered.has(tenant) ? unresponsiveFault(problem) : undefined;
    },

    async destroy(tenant: string): Promise<void> {
      answered.delete(tenant);
      probeAccesses.delete(tenant);
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
