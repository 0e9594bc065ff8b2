/**
 * Contracts between the syncer's parts (issue 5), written first so the pieces can be built in
 * parallel. Implementations:
 *   naming.ts      tenantPrefix, superNamespace, syncLabels       (pure, property-tested)
 *   filter.ts      checkPodIsolation                             (pure, one test per rule)
 *   isolation-schema.ts  IsolationPolicy, defaultIsolationPolicy, parseIsolationPolicy
 *   fair-queue.ts  createFairQueue                               (weighted round robin per tenant)
 *   syncer.ts      the engine (downward, upward, vNodes, patroller)
 *   ../vn-agent/   the kubelet-API proxy; publishes its endpoints through vnAgentEndpoints()
 */
import { processSlot } from "@/server/core/process-slots";
import type { V1Pod } from "@/server/k8s/kinds/node";
import type { IsolationPolicy, IsolationRule } from "./isolation-schema";

export type { IsolationPolicy, IsolationRule, PodSecurityLevel } from "./isolation-schema";

/** Labels and annotations on every object the syncer writes into the super cluster. */
export const syncLabels = {
  /** The owning tenant's name. */
  tenant: "ring0.dev/tenant",
  /** Marks objects the syncer manages (value "true"). */
  managed: "ring0.dev/synced",
} as const;
export const syncAnnotations = {
  /** The object's namespace in the tenant control plane. */
  namespace: "ring0.dev/tenant-namespace",
  /** The object's name in the tenant control plane. */
  name: "ring0.dev/tenant-name",
  /** The object's uid in the tenant control plane. */
  uid: "ring0.dev/tenant-uid",
  /**
   * A pod's metadata.generation in the tenant control plane when it was last written below: what
   * the super pod's observed generations are told up as (upward-status.ts).
   */
  generation: "ring0.dev/tenant-generation",
} as const;

export interface Naming {
  /** A fixed-length, DNS-label-safe prefix unique to the tenant (e.g. "t1a2b3c4"). */
  tenantPrefix(tenant: string): string;
  /** `<prefix>-<namespace>`, at most 63 characters, hashed when long; injective per tenant. */
  superNamespace(tenant: string, namespace: string): string;
}

export interface IsolationViolation {
  rule: IsolationRule;
  /** JSON path of the offending field, e.g. spec.containers[0].securityContext.privileged. */
  field: string;
  /** For the tenant: what is refused and why, one sentence. */
  message: string;
}

export type CheckPodIsolation = (pod: V1Pod, policy: IsolationPolicy) => IsolationViolation[];

/** A weighted-round-robin queue of work items per tenant (no tenant starves another). */
export interface FairQueue<T> {
  add(tenant: string, item: T): void;
  /** The next item by weighted round robin across tenants with work; waits when empty; null once shut down. */
  next(): Promise<{ tenant: string; item: T } | null>;
  setWeight(tenant: string, weight: number): void;
  /** Pause/resume one tenant's queue (its control plane went away) without affecting others. */
  pause(tenant: string): void;
  resume(tenant: string): void;
  removeTenant(tenant: string): void;
  stats(): Record<
    string,
    { depth: number; oldestAgeMs: number; served: number; weight: number; paused: boolean }
  >;
  shutdown(): void;
}

/** Where the vn-agent serving a super-cluster node listens (vNodes point their kubelet endpoint there). */
export interface VnAgentEndpoint {
  /** The super-cluster node this agent fronts. */
  node: string;
  host: "localhost";
  port: number;
  /**
   * Where every tenant API server reaches it, when that is not its session's kubeletHost: a vn-agent
   * pod's own address (the chart's DaemonSet, one agent beside each node's kubelet).
   */
  address?: string;
}

const endpoints = processSlot<Map<string, VnAgentEndpoint>>("vnAgent.endpoints");

export function setVnAgentEndpoints(value: Map<string, VnAgentEndpoint> | null): void {
  endpoints.set(value ?? undefined);
}

export function vnAgentEndpoints(): Map<string, VnAgentEndpoint> {
  return endpoints.get() ?? new Map();
}
