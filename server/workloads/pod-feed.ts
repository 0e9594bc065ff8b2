/**
 * The Workloads page's live pod list: a list-then-watch of pods in the tenant's control plane as
 * the signed-in user (server/k8s/watch.ts' loop over controlPlaneWatchTransport, so the tenant's
 * RBAC decides every list and watch), yielding the whole list again after each change.
 *
 * Scope as listPods: one namespace; else cluster-wide when RBAC allows it; else a watch of the
 * namespaces plus one pod watch per namespace, dropping those whose pods the user may not list.
 * Changes are coalesced (at most one snapshot per `coalesceMs`); an expired watch (410) relists
 * and a broken one reconnects with backoff, both inside the loop. A refusal (401/403) ends the
 * feed with the API's own error, as does any failure before the first snapshot, so a user without
 * rights gets the same answer as from `workloads.pods.list`; the exceptions are a namespace whose
 * pods may not be listed (left out, as listPods does) and a namespace list that may not be watched
 * (the namespaces listed are kept; one created later shows after the page is opened again).
 */
import { controlPlaneWatchTransport } from "@/server/impersonation/as-user";
import { ControlPlaneNotServingError } from "@/server/k8s/control-plane-client";
import type { K8sError } from "@/server/k8s/errors";
import { NamespaceKind } from "@/server/k8s/kinds/namespace";
import type { V1Pod } from "@/server/k8s/kinds/node";
import { PodKind } from "@/server/k8s/kinds/pod";
import {
  abortableSleep,
  type Backoff,
  createListWatch,
  type ListWatch,
  type WatchTransport,
} from "@/server/k8s/watch";
import { type Acting, byName, type NotServing, type PodList, podRow } from "./pods";

export interface PodFeedOptions {
  /** Defaults to the tenant's control plane as `acting.user`. */
  transport?: WatchTransport;
  /** Minimum gap between two snapshots; a burst of changes becomes one. Default 250 ms. */
  coalesceMs?: number;
  backoff?: Backoff;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  now?: () => number;
}

interface PodScope {
  watch: ListWatch;
  pods: Map<string, V1Pod>;
  synced: boolean;
  /** RBAC refused this namespace's pods (per-namespace mode only). */
  refused: boolean;
}

const refusal = (error: K8sError) => error.status === 401 || error.status === 403;

function notServingOf(error: K8sError): NotServing | undefined {
  const cause = error.cause;
  return cause instanceof ControlPlaneNotServingError
    ? { state: "not-serving", phase: cause.phase, message: cause.message }
    : undefined;
}

const keyOf = (pod: V1Pod) => `${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}`;
const podsPath = (namespace: string) => PodKind.path({ namespace });
const allPodsPath = PodKind.path();

/** The pod list once the watches have synced, then again (coalesced) after every change. */
export async function* watchPods(
  acting: Acting,
  namespace: string | undefined,
  signal: AbortSignal | undefined,
  options: PodFeedOptions = {},
): AsyncGenerator<PodList> {
  const transport = options.transport ?? controlPlaneWatchTransport(acting.tenant, acting.user);
  const coalesceMs = options.coalesceMs ?? 250;
  const sleep = options.sleep ?? abortableSleep;
  const now = options.now ?? Date.now;
  const stopped = new AbortController();
  const stop = () => stopped.abort();
  signal?.addEventListener("abort", stop, { once: true });
  if (signal?.aborted) stop();

  const scopes = new Map<string, PodScope>();
  let namespaceWatch: ListWatch | undefined;
  let namespacesSynced = false;
  /** The cluster-wide refusal, answered when every namespace refuses too (as listPods does). */
  let clusterRefusal: K8sError | undefined;
  let notServing: NotServing | undefined;
  let failure: K8sError | undefined;
  let emitted = false;
  let dirty = true;
  let wake: (() => void) | undefined;

  const changed = () => {
    dirty = true;
    wake?.();
  };
  const fail = (error: K8sError) => {
    failure ??= error;
    changed();
  };
  /** Errors common to every watch: not serving is a state; before the first snapshot, the answer. */
  const common = (error: K8sError): boolean => {
    const down = notServingOf(error);
    if (down) {
      notServing = down;
      changed();
      return true;
    }
    if (!emitted && !refusal(error)) {
      fail(error);
      return true;
    }
    return false;
  };

  const watchPodsAt = (path: string, perNamespace: boolean): PodScope => {
    const scope: PodScope = {
      watch: { stop() {}, resourceVersion: () => "" },
      pods: new Map(),
      synced: false,
      refused: false,
    };
    scope.watch = createListWatch<V1Pod>(
      { path },
      {
        onSync(items) {
          scope.pods = new Map(items.map((pod) => [keyOf(pod), pod]));
          scope.synced = true;
          notServing = undefined;
          changed();
        },
        onEvent(type, pod) {
          if (type === "DELETED") scope.pods.delete(keyOf(pod));
          else scope.pods.set(keyOf(pod), pod);
          changed();
        },
        onError(error) {
          if (common(error)) return;
          if (!refusal(error)) return; // the loop reconnects with backoff
          if (perNamespace && !scope.synced) {
            scope.watch.stop();
            scope.refused = true;
            scope.pods.clear();
            changed();
          } else if (path === allPodsPath && !scope.synced && !namespace) {
            scope.watch.stop();
            scopes.delete(path);
            clusterRefusal = error;
            watchNamespaces();
          } else fail(error);
        },
      },
      { transport, ...(options.backoff ? { backoff: options.backoff } : {}), sleep },
    );
    return scope;
  };

  const startNamespace = (name: string) => {
    const path = podsPath(name);
    if (!scopes.has(path)) scopes.set(path, watchPodsAt(path, true));
  };
  const stopNamespace = (name: string) => {
    const path = podsPath(name);
    scopes.get(path)?.watch.stop();
    if (scopes.delete(path)) changed();
  };

  function watchNamespaces() {
    namespaceWatch = createListWatch<{ metadata?: { name?: string } }>(
      { path: NamespaceKind.path() },
      {
        onSync(items) {
          const names = new Set(items.map((item) => item.metadata?.name ?? "").filter(Boolean));
          for (const path of [...scopes.keys()]) {
            const name = decodeURIComponent(path.split("/")[4] ?? "");
            if (!names.has(name)) stopNamespace(name);
          }
          for (const name of names) startNamespace(name);
          namespacesSynced = true;
          notServing = undefined;
          changed();
        },
        onEvent(type, item) {
          const name = item.metadata?.name;
          if (!name) return;
          if (type === "DELETED") stopNamespace(name);
          else startNamespace(name);
          changed();
        },
        onError(error) {
          if (common(error)) return;
          if (!refusal(error)) return;
          // Listed but not watchable: keep the namespaces listed, only new ones go unnoticed.
          if (namespacesSynced) namespaceWatch?.stop();
          else fail(error);
        },
      },
      { transport, ...(options.backoff ? { backoff: options.backoff } : {}), sleep },
    );
  }

  /** The list when every watch in scope has answered; undefined while some have not. */
  const snapshot = (): PodList | undefined => {
    const perNamespace = namespaceWatch !== undefined;
    const answered = [...scopes.values()].every((scope) => scope.synced || scope.refused);
    if (notServing) return notServing;
    if (perNamespace ? !namespacesSynced || !answered : scopes.size === 0 || !answered) return undefined;
    const all = [...scopes.values()];
    if (perNamespace && clusterRefusal && all.length > 0 && all.every((scope) => scope.refused)) {
      fail(clusterRefusal);
      return undefined;
    }
    return {
      state: "serving",
      pods: all
        .flatMap((scope) => [...scope.pods.values()])
        .map(podRow)
        .sort(byName),
    };
  };

  if (namespace) scopes.set(podsPath(namespace), watchPodsAt(podsPath(namespace), false));
  else scopes.set(allPodsPath, watchPodsAt(allPodsPath, false));

  const abortWake = () => wake?.();
  stopped.signal.addEventListener("abort", abortWake);
  let last = "";
  let lastAt = Number.NEGATIVE_INFINITY;
  try {
    while (!stopped.signal.aborted) {
      if (!dirty && !failure) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      if (failure) throw failure;
      // Coalesce: a change soon after the last snapshot waits out the rest of the window.
      const wait = lastAt + coalesceMs - now();
      if (emitted && wait > 0) {
        await sleep(wait, stopped.signal);
        if (stopped.signal.aborted) break;
      }
      dirty = false;
      const list = snapshot();
      if (failure) throw failure;
      if (!list) continue;
      const key = JSON.stringify(list);
      if (key === last) continue;
      last = key;
      emitted = true;
      lastAt = now();
      yield list;
    }
  } finally {
    signal?.removeEventListener("abort", stop);
    stopped.signal.removeEventListener("abort", abortWake);
    stop();
    namespaceWatch?.stop();
    for (const scope of scopes.values()) scope.watch.stop();
  }
}
