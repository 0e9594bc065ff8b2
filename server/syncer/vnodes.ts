/**
 * vNodes: a Node in the tenant control plane for each super node that runs the tenant's pods,
 * carrying that node's capacity and conditions and pointing its kubelet endpoint at the node's
 * vn-agent. A tenant control plane has no kubelet, so Ring0 renews each vNode's Lease in
 * kube-node-lease as the kubelet would (40 s lease, renewed every 10 s): the tenant's node
 * lifecycle controller reads a fresh Lease as a live node and neither marks it Unknown nor taints
 * it unreachable (which would evict the tenant's pods).
 */
import { microTime } from "@/server/controllers/leader";
import { deleteObject, serverSideApply } from "@/server/k8s/apply";
import { isAlreadyExists, isUnreachable } from "@/server/k8s/errors";
import { NodeKind } from "@/server/k8s/kinds/node";
import { kubeRequest } from "@/server/k8s/transport";
import { syncLabels, vnAgentEndpoints } from "./contracts";
import {
  boundByRing0,
  messageOf,
  nodeNameOf,
  type Obj,
  readOrNull,
  type SyncContext,
  type TenantSession,
} from "./session";
import type { Json } from "./synced-kinds";
import { hashOf } from "./translate";
import { vNodeContent, vNodeLabel, vNodeStatus } from "./vnode-content";

const leaseDurationSeconds = 40;
const vNodeHashAnnotation = "ring0.dev/vnode-hash";

export interface VNodes {
  /** Super nodes running a pod of the tenant (bound in the tenant, or scheduled below). */
  nodesInUse(session: TenantSession): Set<string>;
  /** Create or refresh the vNode when a pod of the tenant runs there; otherwise delete it and its Lease. */
  sync(session: TenantSession, node: string): Promise<void>;
  /** Create or refresh the vNode (before a pod is bound to it). */
  ensure(session: TenantSession, node: string): Promise<void>;
  /** Renew every vNode's Lease. */
  heartbeat(sessions: Iterable<TenantSession>): Promise<void>;
  /** Rewrite every vNode's status with fresh condition heartbeats. */
  refreshStatus(sessions: Iterable<TenantSession>): Promise<void>;
}

/**
 * The super nodes a tenant needs vNodes for: those its pods are bound to by Ring0 in its control
 * plane (a pod the tenant pinned to a node name is not Ring0's binding), and those its copies below
 * are scheduled to (a vNode exists before the binding that names it).
 */
export function nodesRunningTenant(
  tenant: string,
  tenantPods: Iterable<Obj>,
  superPods: Iterable<Obj>,
): Set<string> {
  const nodes = new Set<string>();
  for (const pod of tenantPods) {
    const node = nodeNameOf(pod);
    if (node && boundByRing0(pod)) nodes.add(node);
  }
  for (const pod of superPods) {
    if (pod.metadata.labels?.[syncLabels.tenant] !== tenant) continue;
    const node = nodeNameOf(pod);
    if (node) nodes.add(node);
  }
  return nodes;
}

export function createVNodes(ctx: SyncContext, onUnreachable: (tenant: string) => void): VNodes {
  const { clock, log } = ctx;

  function nodesInUse(session: TenantSession): Set<string> {
    return nodesRunningTenant(session.tenant, session.caches.pod.values(), ctx.superPods()?.values() ?? []);
  }

  async function sync(session: TenantSession, node: string): Promise<void> {
    if (nodesInUse(session).has(node)) {
      await ensure(session, node);
      return;
    }
    const existing =
      session.vNodes.get("", node) ??
      (await readOrNull<Obj>(session.conn, { apiVersion: "v1", kind: "Node", metadata: { name: node } }));
    if (existing?.metadata.labels?.[vNodeLabel] !== "true") return;
    await deleteObject(session.conn, { apiVersion: "v1", kind: "Node", metadata: { name: node } });
    await deleteObject(session.conn, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: node, namespace: "kube-node-lease" },
    });
    log.info("vNode removed: no pod of the tenant runs there", { tenant: session.tenant, node });
  }

  async function ensure(session: TenantSession, node: string): Promise<void> {
    const superNode = ctx.superNodes()?.get("", node);
    if (!superNode) return; // the node left the super cluster; its pods are evicted below
    const agent = vnAgentEndpoints().get(node);
    const content = vNodeContent(superNode as Json, agent?.port, agent?.address ?? session.kubeletHost);
    const hash = hashOf(content);
    const existing = session.vNodes.get("", node);
    const nowIso = new Date(clock.now()).toISOString();
    const metadata = {
      name: node,
      labels: content.labels,
      annotations: { ...content.annotations, [vNodeHashAnnotation]: hash },
    };
    if (existing?.metadata.annotations?.[vNodeHashAnnotation] === hash) return;
    let uid = existing?.metadata.uid;
    if (!existing) {
      try {
        // Nodes keep the status they are created with (as when a kubelet registers).
        const created = await kubeRequest<Obj>(session.conn, {
          method: "POST",
          path: NodeKind.path(),
          body: {
            apiVersion: "v1",
            kind: "Node",
            metadata,
            spec: {},
            status: vNodeStatus(content.status, nowIso),
          },
          timeoutMs: 15_000,
        });
        uid = created.metadata.uid;
        log.info("vNode created", { tenant: session.tenant, node, kubeletPort: agent?.port ?? null });
        await renewLease(session, node, uid);
        return;
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
    }
    const patched = await kubeRequest<Obj>(session.conn, {
      method: "PATCH",
      path: NodeKind.path({ name: node }),
      contentType: "application/merge-patch+json",
      body: { metadata: { labels: metadata.labels, annotations: metadata.annotations } },
      timeoutMs: 15_000,
    });
    await kubeRequest(session.conn, {
      method: "PATCH",
      path: NodeKind.path({ name: node, subresource: "status" }),
      contentType: "application/merge-patch+json",
      body: { status: vNodeStatus(content.status, nowIso) },
      timeoutMs: 15_000,
    });
    await renewLease(session, node, patched.metadata.uid ?? uid);
  }

  /** The node Lease the tenant's node lifecycle controller reads as the kubelet's heartbeat. */
  async function renewLease(session: TenantSession, node: string, uid: unknown): Promise<void> {
    await serverSideApply(
      session.conn,
      {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: {
          name: node,
          namespace: "kube-node-lease",
          ...(typeof uid === "string"
            ? { ownerReferences: [{ apiVersion: "v1", kind: "Node", name: node, uid }] }
            : {}),
        },
        spec: {
          holderIdentity: node,
          leaseDurationSeconds,
          renewTime: microTime(clock.now()),
        },
      },
      { force: true },
    );
  }

  /** Tenants in parallel, so one slow control plane cannot let another's leases expire. */
  async function eachVNode(
    sessions: Iterable<TenantSession>,
    task: (session: TenantSession, vNode: Obj) => Promise<void>,
  ): Promise<void> {
    await Promise.all(
      [...sessions]
        .filter((session) => session.synced && !session.unreachable && !session.stopped)
        .map(async (session) => {
          for (const vNode of [...session.vNodes.values()]) await task(session, vNode);
        }),
    );
  }

  async function heartbeat(sessions: Iterable<TenantSession>): Promise<void> {
    await eachVNode(sessions, async (session, vNode) => {
      try {
        await renewLease(session, vNode.metadata.name, vNode.metadata.uid);
      } catch (error) {
        if (isUnreachable(error)) onUnreachable(session.tenant);
        log.debug("renewing a vNode lease failed", {
          tenant: session.tenant,
          node: vNode.metadata.name,
          error: messageOf(error),
        });
      }
    });
  }

  /** The vNode's Ready heartbeat in its status (kubectl shows it; the lease is what keeps it Ready). */
  async function refreshStatus(sessions: Iterable<TenantSession>): Promise<void> {
    await eachVNode(sessions, async (session, vNode) => {
      const superNode = ctx.superNodes()?.get("", vNode.metadata.name);
      if (!superNode) return;
      const agent = vnAgentEndpoints().get(vNode.metadata.name);
      const content = vNodeContent(superNode as Json, agent?.port, agent?.address ?? session.kubeletHost);
      await kubeRequest(session.conn, {
        method: "PATCH",
        path: NodeKind.path({ name: vNode.metadata.name, subresource: "status" }),
        contentType: "application/merge-patch+json",
        body: { status: vNodeStatus(content.status, new Date(clock.now()).toISOString()) },
        timeoutMs: 15_000,
      }).catch((error) =>
        log.debug("refreshing a vNode failed", { tenant: session.tenant, error: messageOf(error) }),
      );
    });
  }

  return { nodesInUse, sync, ensure, heartbeat, refreshStatus };
}
