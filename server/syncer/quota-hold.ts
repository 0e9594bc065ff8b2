/**
 * The syncer's quota backstop: a tenant pod that would take what the tenant runs on the super
 * cluster over its quota is held back (never synced down) until room appears or the quota is
 * raised. The webhook refuses such pods at admission; this catches the ones that got in without it
 * (created before the quota was set or lowered, or while Ring0's webhook was being registered).
 *
 * "Runs" is: pods synced below, plus pods this syncer has decided to sync but the super cluster's
 * watch has not shown yet (`admitting`). The check and the entry in `admitting` are one synchronous
 * step, so concurrent workers cannot both take the last unit.
 */
import type { QuotaHard } from "@/server/core/quota-resources";
import {
  addUsage,
  checkAgainst,
  type Exceeded,
  type PodLike,
  podCounts,
  podUsage,
  refusalMessage,
  type Usage,
} from "@/server/quotas/usage";

export const quotaConditionType = "ring0.dev/QuotaExceeded";

export interface QuotaHoldState {
  /** Pods decided for syncing, not yet seen below ("namespace/name" → their usage). */
  admitting: Map<string, Usage>;
  /** Pods held back ("namespace/name"): requeued when room may have appeared. */
  held: Set<string>;
}

export function createQuotaHoldState(): QuotaHoldState {
  return { admitting: new Map(), held: new Set() };
}

export type HoldDecision = { hold: false } | { hold: true; exceeded: Exceeded[]; message: string };

export interface HoldInput {
  tenant: string;
  hard: QuotaHard;
  key: string;
  pod: PodLike;
  /** Every pod of the tenant, with whether it is synced below. */
  pods: Iterable<{ key: string; pod: PodLike; below: boolean }>;
  now: Date;
}

/** Decide for one pod not yet below; when it may go, it is entered in `admitting` in the same step. */
export function decideHold(state: QuotaHoldState, input: HoldInput): HoldDecision {
  let used: Usage = {};
  const present = new Set<string>();
  for (const { key, pod, below } of input.pods) {
    present.add(key);
    if (key === input.key) continue;
    if (below) {
      state.admitting.delete(key);
      if (podCounts(pod, input.now)) used = addUsage(used, podUsage(pod));
    }
  }
  for (const [key, usage] of state.admitting) {
    // A pod deleted in the tenant before it reached the super cluster no longer needs room.
    if (!present.has(key)) state.admitting.delete(key);
    else if (key !== input.key) used = addUsage(used, usage);
  }
  const delta = podUsage(input.pod);
  const exceeded = checkAgainst(input.hard, used, delta);
  if (exceeded.length > 0) {
    state.held.add(input.key);
    return {
      hold: true,
      exceeded,
      message: `${refusalMessage(input.tenant, exceeded)}. Ring0 holds the pod back and starts it when room appears or the quota is raised.`,
    };
  }
  state.held.delete(input.key);
  state.admitting.set(input.key, delta);
  return { hold: false };
}
