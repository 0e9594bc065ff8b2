/**
 * The Node model (Headlamp KubeObject style): the super cluster's nodes as the panel shows them.
 * Pure functions over the API objects; the V1Node/V1Pod types are re-exported here because nothing
 * outside server/k8s may import @kubernetes/client-node.
 */
import type { V1Node, V1Pod } from "@kubernetes/client-node";
import { defineKind } from "./kind";

export type { V1Node, V1Pod };

export const NodeKind = defineKind<V1Node>({
  apiVersion: "v1",
  kind: "Node",
  plural: "nodes",
  namespaced: false,
});

export type NodeStatus = "Ready" | "NotReady" | "Unknown";

export interface NodeResources {
  cpu: string;
  memory: string;
  pods: string;
}

export interface NodeCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export interface NodeSummary {
  name: string;
  status: NodeStatus;
  roles: string[];
  zone: string | null;
  instanceType: string | null;
  capacity: NodeResources;
  allocatable: NodeResources;
  /** Non-terminated pods bound to the node. */
  pods: number;
  createdAt: string;
  kubeletVersion: string;
  unschedulable: boolean;
  taints: { key: string; value: string; effect: string }[];
  labels: Record<string, string>;
  conditions: NodeCondition[];
  addresses: { type: string; address: string }[];
}

const rolePrefix = "node-role.kubernetes.io/";
export const zoneLabel = "topology.kubernetes.io/zone";
export const instanceTypeLabel = "node.kubernetes.io/instance-type";

function isoTime(value: Date | string | undefined): string {
  if (!value) return "";
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "" : value.toISOString();
  return value;
}

function resources(map: Record<string, string> | undefined): NodeResources {
  return { cpu: map?.cpu ?? "0", memory: map?.memory ?? "0", pods: map?.pods ?? "0" };
}

export function nodeStatus(node: V1Node): NodeStatus {
  const ready = node.status?.conditions?.find((condition) => condition.type === "Ready");
  if (ready?.status === "True") return "Ready";
  if (ready?.status === "False") return "NotReady";
  return "Unknown";
}

/** Roles from node-role.kubernetes.io/<role> labels; "worker" when there are none. */
export function nodeRoles(labels: Record<string, string>): string[] {
  const roles = Object.keys(labels)
    .filter((key) => key.startsWith(rolePrefix) && key.length > rolePrefix.length)
    .map((key) => key.slice(rolePrefix.length))
    .sort();
  return roles.length > 0 ? roles : ["worker"];
}

export function summariseNode(node: V1Node, podsOnNode: number): NodeSummary {
  const labels = node.metadata?.labels ?? {};
  return {
    name: node.metadata?.name ?? "",
    status: nodeStatus(node),
    roles: nodeRoles(labels),
    zone: labels[zoneLabel] ?? null,
    instanceType: labels[instanceTypeLabel] ?? null,
    capacity: resources(node.status?.capacity),
    allocatable: resources(node.status?.allocatable),
    pods: podsOnNode,
    createdAt: isoTime(node.metadata?.creationTimestamp),
    kubeletVersion: node.status?.nodeInfo?.kubeletVersion ?? "",
    unschedulable: node.spec?.unschedulable === true,
    taints: (node.spec?.taints ?? []).map((taint) => ({
      key: taint.key,
      value: taint.value ?? "",
      effect: taint.effect,
    })),
    labels: { ...labels },
    conditions: (node.status?.conditions ?? []).map((condition) => ({
      type: condition.type,
      status: condition.status,
      reason: condition.reason ?? "",
      message: condition.message ?? "",
      lastTransitionTime: isoTime(condition.lastTransitionTime),
    })),
    addresses: (node.status?.addresses ?? []).map((address) => ({
      type: address.type,
      address: address.address,
    })),
  };
}

/** Pods that still occupy their node: not Succeeded or Failed. */
export function isPodTerminated(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return phase === "Succeeded" || phase === "Failed";
}

/** Non-terminated pods per spec.nodeName (unscheduled pods are not counted). */
export function podsPerNode(pods: V1Pod[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const pod of pods) {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName || isPodTerminated(pod)) continue;
    counts.set(nodeName, (counts.get(nodeName) ?? 0) + 1);
  }
  return counts;
}
