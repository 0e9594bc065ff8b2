import { stillStartingMessage } from "@/server/core/start-state";
import { UnavailableError } from "@/server/errors";
import { type ClusterConnection, getSuperCluster } from "@/server/k8s/cluster";
import type { SharedInformer } from "@/server/k8s/informers";

/** The connected super cluster, or an UnavailableError saying where to look. */
export function requireSuperCluster(): ClusterConnection {
  // Until its start is done (CRDs installed), the super cluster is not used for requests.
  const starting = stillStartingMessage("super-cluster");
  if (starting) throw new UnavailableError(starting);
  const cluster = getSuperCluster();
  if (!cluster) {
    throw new UnavailableError(
      "The super cluster is not connected. Check SUPER_KUBECONFIG or the local super cluster (npm run cluster:status).",
    );
  }
  return cluster;
}

const syncTimeoutMs = 15_000;

/**
 * Waits for an informer's first list, failing fast with the API's own error (unreachable server,
 * missing CRD) instead of waiting through the informer's retries.
 */
async function waitForSync(informer: SharedInformer<unknown>, what: string): Promise<void> {
  const deadline = Date.now() + syncTimeoutMs;
  let done = false;
  const ready = informer.synced().then(() => {
    done = true;
  });
  while (!done) {
    const error = informer.lastError();
    if (error) throw error;
    if (Date.now() > deadline)
      throw new UnavailableError(`The super cluster did not answer the ${what} in time.`);
    await Promise.race([ready, new Promise((resolve) => setTimeout(resolve, 100))]);
  }
}

/**
 * Reads synced informers, holding a subscription while it waits so the watches stay open (a
 * synced informer answers from memory; the first caller pays for the initial list).
 */
export async function readSynced<T>(
  informers: SharedInformer<unknown>[],
  what: string,
  read: () => T,
): Promise<T> {
  const release = informers.map((informer) => informer.subscribe(() => {}));
  try {
    await Promise.all(informers.map((informer) => waitForSync(informer, what)));
    return read();
  } finally {
    for (const unsubscribe of release) unsubscribe();
  }
}

/**
 * A live view over informers: yields `compute()` once synced and again after every change
 * (coalesced by the informers) until the signal aborts. Only the latest value is kept, so a slow
 * browser skips intermediate states instead of queueing them.
 */
export async function* liveView<T>(
  informers: SharedInformer<unknown>[],
  what: string,
  compute: () => T,
  signal: AbortSignal | undefined,
): AsyncGenerator<T> {
  let latest: { value: T } | null = null;
  let wake: (() => void) | null = null;
  const changed = () => {
    latest = { value: compute() };
    wake?.();
  };
  const release = informers.map((informer) => informer.subscribe(changed));
  const aborted = () => wake?.();
  signal?.addEventListener("abort", aborted);
  try {
    await Promise.all(informers.map((informer) => waitForSync(informer, what)));
    latest ??= { value: compute() };
    while (!signal?.aborted) {
      if (latest) {
        const next: T = (latest as { value: T }).value;
        latest = null;
        yield next;
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  } finally {
    signal?.removeEventListener("abort", aborted);
    for (const unsubscribe of release) unsubscribe();
  }
}
