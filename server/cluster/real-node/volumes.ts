/**
 * Local volumes for the real nodes of this host (issue 18): a dynamic provisioner for the super
 * cluster's StorageClass `ring0-local`. The class binds on the first consumer, so the super
 * scheduler picks the node (a real one: its allowed topology) and names it on the claim; Ring0 then
 * makes a directory for the claim under that node's files and a `local` PersistentVolume there,
 * pinned to the node and bound to the claim. When the claim goes (the volume is Released and its
 * reclaim policy is Delete) the directory and the volume go too.
 *
 * The directory is `<state>/real-nodes/<node>/volumes/<volume>`: the node's other files (its
 * kubelet's emptyDirs) live there too, and removing the node removes them all. The path is never
 * read back from a volume: a volume is reclaimed by its name, which must be one of ours, under the
 * node it is pinned to, so nothing written to a PersistentVolume can make Ring0 delete another path.
 *
 * The size a claim asks for is what tenants' quotas count; the directory is not capped (no project
 * quotas on this machine kind), as with other host-path provisioners.
 */
import fs from "node:fs";
import path from "node:path";
import { createObject, deleteObject, type KubeObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isAlreadyExists, isNotFound } from "@/server/k8s/errors";
import type { Logger } from "@/server/logger";
import { claimRefOf } from "@/server/syncer/claims";
import { LOCAL_STORAGE_CLASS, LOCAL_VOLUME_PROVISIONER } from "@/server/syncer/isolation-schema";
import { createWatchCache, type WatchCache } from "@/server/syncer/watch-cache";
import { REAL_NODE_LABEL, realNodeIndex, realNodesDir } from "./plan";

/** The annotation the super scheduler puts on a claim of a delayed-binding class: the node it chose. */
export const SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node";
/** Label of every volume Ring0 provisions (how they are listed). */
export const LOCAL_VOLUME_LABEL = "ring0.dev/local-volume";

interface Claim extends KubeObject {
  spec?: {
    storageClassName?: string;
    volumeName?: string;
    accessModes?: string[];
    volumeMode?: string;
    resources?: { requests?: { storage?: string } };
  };
  status?: { phase?: string };
}

interface Volume extends KubeObject {
  spec?: {
    persistentVolumeReclaimPolicy?: string;
    nodeAffinity?: unknown;
  };
  status?: { phase?: string };
}

/** The StorageClass every real node serves (applied by fleet.ts while real nodes exist). */
export function localStorageClass(): KubeObject {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: LOCAL_STORAGE_CLASS, labels: { "app.kubernetes.io/managed-by": "ring0" } },
    provisioner: LOCAL_VOLUME_PROVISIONER,
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
    allowVolumeExpansion: false,
    allowedTopologies: [{ matchLabelExpressions: [{ key: REAL_NODE_LABEL, values: ["true"] }] }],
  } as KubeObject;
}

/** The volume's name for a claim: one per claim (its uid), so a claim made again gets a new one. */
export function volumeNameFor(claim: Claim): string {
  return `pvc-${claim.metadata.uid}`;
}

/** A volume name Ring0 would have made (and may therefore reclaim). */
export function isLocalVolumeName(name: string): boolean {
  return /^pvc-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(name);
}

/** Where a node's volumes live (under the node's own files). */
export function nodeVolumesDir(stateDir: string, node: string): string {
  return path.join(realNodesDir(stateDir), node, "volumes");
}

/**
 * The node a claim should get a volume on now, or null: a pending, unbound claim of Ring0's class
 * whose consumer the scheduler placed on one of this host's real nodes (`isOurs`).
 */
export function nodeToProvision(claim: Claim, isOurs: (node: string) => boolean): string | null {
  if (claim.metadata.deletionTimestamp || !claim.metadata.uid) return null;
  if (claim.spec?.storageClassName !== LOCAL_STORAGE_CLASS || claim.spec.volumeName) return null;
  if (claim.status?.phase && claim.status.phase !== "Pending") return null;
  const node = claim.metadata.annotations?.[SELECTED_NODE_ANNOTATION];
  return node && realNodeIndex(node) !== undefined && isOurs(node) ? node : null;
}

/** The PersistentVolume for `claim` on `node`, at `dir`, bound to the claim from the start. */
export function localVolume(claim: Claim, node: string, dir: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: {
      name: volumeNameFor(claim),
      labels: { [LOCAL_VOLUME_LABEL]: "true" },
      annotations: { "pv.kubernetes.io/provisioned-by": LOCAL_VOLUME_PROVISIONER },
    },
    spec: {
      capacity: { storage: claim.spec?.resources?.requests?.storage ?? "1Gi" },
      accessModes: claim.spec?.accessModes ?? ["ReadWriteOnce"],
      volumeMode: claim.spec?.volumeMode ?? "Filesystem",
      persistentVolumeReclaimPolicy: "Delete",
      storageClassName: LOCAL_STORAGE_CLASS,
      claimRef: claimRefOf(claim),
      local: { path: dir },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [node] }] },
          ],
        },
      },
    },
  } as KubeObject;
}

/** The node a volume of ours is pinned to (the one value of its hostname term), or null. */
export function pinnedNode(volume: Volume): string | null {
  const terms = (volume.spec?.nodeAffinity as { required?: { nodeSelectorTerms?: unknown } } | undefined)
    ?.required?.nodeSelectorTerms;
  if (!Array.isArray(terms) || terms.length !== 1) return null;
  const expressions = (terms[0] as { matchExpressions?: unknown }).matchExpressions;
  if (!Array.isArray(expressions) || expressions.length !== 1) return null;
  const { key, operator, values } = expressions[0] as { key?: unknown; operator?: unknown; values?: unknown };
  if (key !== "kubernetes.io/hostname" || operator !== "In" || !Array.isArray(values) || values.length !== 1)
    return null;
  const node = values[0];
  return typeof node === "string" && realNodeIndex(node) !== undefined ? node : null;
}

/** Whether a volume of ours is done with: its claim gone, and the class said delete. */
export function isReclaimable(volume: Volume): boolean {
  if (!isLocalVolumeName(volume.metadata.name) || volume.metadata.deletionTimestamp) return false;
  if (volume.metadata.annotations?.["pv.kubernetes.io/provisioned-by"] !== LOCAL_VOLUME_PROVISIONER)
    return false;
  const phase = volume.status?.phase;
  return (
    (phase === "Released" || phase === "Failed") && volume.spec?.persistentVolumeReclaimPolicy === "Delete"
  );
}

export interface LocalVolumes {
  stop(): void;
  /** One pass now (also run after every change and every 30 s). */
  pass(): Promise<void>;
}

/**
 * Runs the provisioner against the super cluster for the real nodes whose files are under
 * `stateDir` (this host's). Failures are logged and retried on the next pass.
 */
export function startLocalVolumes(options: {
  superCluster: ClusterConnection;
  stateDir: string;
  logger: Logger;
  resyncMs?: number;
}): LocalVolumes {
  const { superCluster, stateDir } = options;
  const log = options.logger.child({ component: "local-volumes" });
  const isOurs = (node: string) => fs.existsSync(path.join(realNodesDir(stateDir), node));
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const schedule = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass().finally(() => {
      running = null;
      if (again) {
        again = false;
        schedule();
      }
    });
  };
  const claims: WatchCache<Claim> = createWatchCache<Claim>(
    superCluster,
    { path: "/api/v1/persistentvolumeclaims" },
    schedule,
    (error) => log.debug("watching claims failed", { error: error.message }),
  );
  const volumes: WatchCache<Volume> = createWatchCache<Volume>(
    superCluster,
    { path: "/api/v1/persistentvolumes", labelSelector: `${LOCAL_VOLUME_LABEL}=true` },
    schedule,
    (error) => log.debug("watching volumes failed", { error: error.message }),
  );
  const timer = setInterval(schedule, options.resyncMs ?? 30_000);
  timer.unref();

  async function provision(claim: Claim, node: string): Promise<void> {
    const name = volumeNameFor(claim);
    if (volumes.get("", name)) return;
    const dir = path.join(nodeVolumesDir(stateDir, node), name);
    fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o711 });
    fs.mkdirSync(dir, { recursive: true });
    // Whoever the pod runs as may write (the volume is mounted into its pods only).
    fs.chmodSync(dir, 0o777);
    try {
      await createObject(superCluster, localVolume(claim, node, dir));
      log.info("provisioned a local volume", {
        claim: `${claim.metadata.namespace}/${claim.metadata.name}`,
        volume: name,
        node,
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }

  async function reclaim(volume: Volume): Promise<void> {
    const node = pinnedNode(volume);
    if (node && isOurs(node)) {
      fs.rmSync(path.join(nodeVolumesDir(stateDir, node), volume.metadata.name), {
        recursive: true,
        force: true,
      });
    } else if (node) {
      return; // another host's volume: its own Ring0 reclaims it
    }
    try {
      await deleteObject(superCluster, {
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: { name: volume.metadata.name },
      });
      log.info("reclaimed a local volume", { volume: volume.metadata.name, node });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async function pass(): Promise<void> {
    if (!claims.isSynced() || !volumes.isSynced()) return;
    for (const claim of [...claims.values()]) {
      const node = nodeToProvision(claim, isOurs);
      if (!node) continue;
      await provision(claim, node).catch((error: unknown) =>
        log.warn("provisioning a local volume failed", {
          claim: `${claim.metadata.namespace}/${claim.metadata.name}`,
          error,
        }),
      );
    }
    for (const volume of [...volumes.values()]) {
      if (!isReclaimable(volume)) continue;
      await reclaim(volume).catch((error: unknown) =>
        log.warn("reclaiming a local volume failed", { volume: volume.metadata.name, error }),
      );
    }
  }

  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      claims.stop();
      volumes.stop();
    },
    async pass() {
      await Promise.all([claims.synced(), volumes.synced()]);
      await pass();
    },
  };
}
