/**
 * Node shells for operators, done the way `kubectl debug node/<n>` does them and then some: a pod
 * pinned to the node in ring0-system (host PID, network and IPC, the node's root filesystem at
 * /host), labelled as Ring0's, with an expiry annotation and activeDeadlineSeconds so the kubelet
 * ends it even if Ring0 goes away, deleted when the shell ends, and any expired leftovers swept
 * each time a new one opens. The exec endpoint records and audits the session like any shell.
 */

import { randomBytes } from "node:crypto";
import { createObject, deleteObject, type KubeObject, readObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import { PodKind } from "@/server/k8s/kinds/pod";
import { RING0_SYSTEM_NAMESPACE, ring0SystemNamespace } from "@/server/k8s/ring0-system";
import { kubeRequest } from "@/server/k8s/transport";
import { StreamError } from "./sources";

export const nodeShellNamespace = RING0_SYSTEM_NAMESPACE;
export const nodeShellLabel = "ring0.dev/node-shell";
export const nodeShellExpiresAnnotation = "ring0.dev/expires-at";
/** The shell pod's image where nothing else is configured (an external super cluster). */
export const defaultNodeShellImage = "busybox:1.37";

/** The debug pod for a shell on `node` (pure; unit-tested). */
export function nodeShellPod(options: {
  node: string;
  name: string;
  openedBy: string;
  maxSeconds: number;
  now: Date;
  /** Labels the super cluster's pods get for their runtime (the local world's kwok exec label). */
  extraLabels?: Record<string, string>;
  /** Needs sh and sleep; default busybox:1.37. */
  image?: string;
}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: options.name,
      namespace: nodeShellNamespace,
      labels: {
        "app.kubernetes.io/managed-by": "ring0",
        [nodeShellLabel]: "true",
        ...options.extraLabels,
      },
      annotations: {
        [nodeShellExpiresAnnotation]: new Date(
          options.now.getTime() + options.maxSeconds * 1000,
        ).toISOString(),
        "ring0.dev/opened-by": options.openedBy,
      },
    },
    spec: {
      nodeName: options.node,
      restartPolicy: "Never",
      activeDeadlineSeconds: options.maxSeconds,
      terminationGracePeriodSeconds: 0,
      hostPID: true,
      hostNetwork: true,
      hostIPC: true,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      tolerations: [{ operator: "Exists" }],
      containers: [
        {
          name: "shell",
          image: options.image ?? defaultNodeShellImage,
          command: ["sleep", String(options.maxSeconds)],
          stdin: true,
          tty: true,
          volumeMounts: [{ name: "host-root", mountPath: "/host" }],
        },
      ],
      volumes: [{ name: "host-root", hostPath: { path: "/" } }],
    },
  };
}

interface PodList {
  items: Array<{ metadata: { name: string; annotations?: Record<string, string> } }>;
}

/** Deletes node-shell pods past their expiry; returns how many. */
export async function sweepExpiredNodeShells(conn: ClusterConnection, now = new Date()): Promise<number> {
  const list = await kubeRequest<PodList>(conn, {
    path: PodKind.path({ namespace: nodeShellNamespace }),
    query: { labelSelector: `${nodeShellLabel}=true` },
  });
  let swept = 0;
  for (const pod of list.items) {
    const expires = Date.parse(pod.metadata.annotations?.[nodeShellExpiresAnnotation] ?? "");
    if (Number.isNaN(expires) || expires > now.getTime()) continue;
    if (await deleteNodeShell(conn, pod.metadata.name)) swept += 1;
  }
  return swept;
}

export function deleteNodeShell(conn: ClusterConnection, name: string): Promise<boolean> {
  return deleteObject(
    conn,
    { apiVersion: "v1", kind: "Pod", metadata: { name, namespace: nodeShellNamespace } },
    {
      gracePeriodSeconds: 0,
    },
  );
}

/**
 * Creates the shell pod on `node` and resolves with its name once it runs. Throws StreamError 404
 * for an unknown node, 504 when the pod does not start in time (it is deleted then).
 */
export async function openNodeShell(
  conn: ClusterConnection,
  options: {
    node: string;
    openedBy: string;
    maxSeconds: number;
    extraLabels?: Record<string, string>;
    image?: string;
    signal: AbortSignal;
  },
): Promise<string> {
  try {
    await readObject(conn, { apiVersion: "v1", kind: "Node", metadata: { name: options.node } });
  } catch (error) {
    if (isNotFound(error)) throw new StreamError(404, `Node "${options.node}" does not exist.`);
    throw error;
  }
  await serverSideApply(conn, ring0SystemNamespace);
  await sweepExpiredNodeShells(conn).catch(() => 0);
  const name = `node-shell-${options.node.slice(0, 30).replace(/[^a-z0-9-]/g, "-")}-${randomBytes(3).toString("hex")}`;
  await createObject(
    conn,
    nodeShellPod({
      node: options.node,
      name,
      openedBy: options.openedBy,
      maxSeconds: options.maxSeconds,
      now: new Date(),
      extraLabels: options.extraLabels,
      image: options.image,
    }),
  );
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !options.signal.aborted) {
    const pod = await readObject<KubeObject & { status?: { phase?: string } }>(conn, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: nodeShellNamespace },
    }).catch(() => undefined);
    if (pod?.status?.phase === "Running") return name;
    if (pod?.status?.phase === "Failed" || pod?.status?.phase === "Succeeded") break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await deleteNodeShell(conn, name).catch(() => false);
  throw new StreamError(504, `The shell pod on node "${options.node}" did not start within a minute.`);
}
