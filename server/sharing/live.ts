/**
 * The live grants of this process: every SharingPolicy from one shared informer on the super
 * cluster (the registry is a process slot, so the custom server and route handlers read the same
 * one), and the watch that ends open access — gateway watches, log and exec streams, live views —
 * the moment a grant stops covering it: on every change of the grants, and every second for
 * expiries, which need no change to happen.
 */
import { processSlot } from "@/server/core/process-slots";
import { type SharedInformer, sharedInformer } from "@/server/k8s/informers";
import { readSynced, requireSuperCluster } from "@/server/k8s/live";
import { type SharingPolicyResource, sharingPath } from "./types";

export function sharingInformer(): SharedInformer<SharingPolicyResource> {
  return sharedInformer<SharingPolicyResource>(requireSuperCluster(), { path: sharingPath });
}

/** Every SharingPolicy, once the informer has synced (waits for the first list). */
export function allGrants(): Promise<SharingPolicyResource[]> {
  const informer = sharingInformer();
  return readSynced([informer], "sharing policies", () => informer.snapshot());
}

/** Open access to re-check: `stillAllowed` reads the current grants; `revoke` ends the access. */
interface Watched {
  stillAllowed(grants: readonly SharingPolicyResource[], now: Date): boolean;
  revoke(): void;
}

interface AccessWatch {
  watched: Set<Watched>;
  timer?: NodeJS.Timeout;
  unsubscribe?: () => void;
  grants: readonly SharingPolicyResource[];
}

const slot = processSlot<AccessWatch>("sharing.accessWatch");

function state(): AccessWatch {
  return slot.ensure(() => ({ watched: new Set(), grants: [] }));
}

function sweep(watch: AccessWatch): void {
  const now = new Date();
  for (const entry of [...watch.watched]) {
    let allowed = false;
    try {
      allowed = entry.stillAllowed(watch.grants, now);
    } catch {
      allowed = false;
    }
    if (!allowed) {
      watch.watched.delete(entry);
      entry.revoke();
    }
  }
  if (watch.watched.size === 0) stop(watch);
}

function stop(watch: AccessWatch): void {
  if (watch.timer) clearInterval(watch.timer);
  watch.timer = undefined;
  watch.unsubscribe?.();
  watch.unsubscribe = undefined;
}

/**
 * Keeps `revoke` armed until the returned function is called: it runs once, as soon as
 * `stillAllowed` says no (a grant revoked, expired, edited or deleted). The first check runs on
 * the next change or tick; callers check before they open.
 */
export function watchGrantedAccess(
  stillAllowed: Watched["stillAllowed"],
  revoke: () => void,
  sweepMs = 1_000,
): () => void {
  const watch = state();
  const entry: Watched = { stillAllowed, revoke };
  watch.watched.add(entry);
  if (!watch.unsubscribe) {
    const informer = sharingInformer();
    watch.grants = informer.snapshot();
    watch.unsubscribe = informer.subscribe((items) => {
      watch.grants = items;
      sweep(watch);
    });
  }
  if (!watch.timer) {
    watch.timer = setInterval(() => sweep(watch), sweepMs);
    watch.timer.unref();
  }
  return () => {
    watch.watched.delete(entry);
    if (watch.watched.size === 0) stop(watch);
  };
}
