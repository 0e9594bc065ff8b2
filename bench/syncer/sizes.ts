/** The syncer benchmark's sizes (smaller in quick mode) and the labels its pods carry. */
import { sized } from "../lib/figures";

export const TENANTS = 10;
/** 12 kwok nodes × 110 pods: room for the 1000 pods (and the noisy run's 990) at once. */
export const NODES = 12;
export const CREATE_CONCURRENCY = 16;
const LARGE = sized(1000, 300);
export const SIZES = [
  { pods: 100, tenants: 1 },
  { pods: 100, tenants: 10 },
  { pods: LARGE, tenants: 1 },
  { pods: LARGE, tenants: 10 },
] as const;
export const NOISY_PODS = sized(900, 270);
export const QUIET_PODS = 10;
/** The quiet tenants start once the noisy one has created this many pods (its backlog is building). */
export const QUIET_START_AFTER = sized(300, 90);
export const PATROL_ROUNDS = sized(5, 3);
export const RUNNING_TIMEOUT_MS = 5 * 60_000;
/**
 * Tenant pods carry it (and so do their copies below: a domain outside ring0.dev, whose keys never go
 * down); pods created directly below carry the other.
 */
export const SYNCED_LABEL = "bench.ring0.test/synced";
export const DIRECT_LABEL = "bench.ring0.test/direct";
export const TENANT_NAMESPACE = "default";
