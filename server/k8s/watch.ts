/**
 * List-then-watch with resume, the protocol behind every Kubernetes informer:
 *   1. LIST (paged) → onSync(items, resourceVersion)
 *   2. WATCH from that resourceVersion with bookmarks; every event and bookmark advances it
 *   3. a dropped or timed-out watch resumes from the last seen resourceVersion, with backoff on errors
 *   4. 410 Gone/Expired (HTTP status or an ERROR event with code 410) → back to 1 (relist)
 * The loop is written against a small WatchTransport so its state machine is unit-tested with fakes.
 */
import type { ClusterConnection } from "./cluster";
import { errorFromResponse, isGone, type K8sError, statusBody, toK8sError } from "./errors";
import { kubeRequest, kubeStream } from "./transport";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export interface WatchHandlers<T> {
  onSync(items: T[], resourceVersion: string): void;
  onEvent(type: WatchEventType, object: T): void;
  onError?(error: K8sError): void;
}

export interface ListWatchOptions {
  /** Collection path, e.g. /api/v1/nodes or /apis/ring0.dev/v1alpha1/tenants. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ListWatch {
  stop(): void;
  /** The last resourceVersion seen (list, event or bookmark); "" before the first list. */
  resourceVersion(): string;
}

/** One raw line of the watch stream. */
export interface RawWatchEvent {
  type: string;
  object: unknown;
}

export interface WatchTransport {
  list(
    path: string,
    query: Record<string, string | undefined>,
    signal: AbortSignal,
  ): Promise<{ items: unknown[]; resourceVersion: string; continue?: string }>;
  /** Streams events until the server ends the watch (resolves) or it fails (rejects). */
  watch(
    path: string,
    query: Record<string, string | undefined>,
    onEvent: (event: RawWatchEvent) => void,
    signal: AbortSignal,
  ): Promise<void>;
}

export interface Backoff {
  /** Delay before retry number `attempt` (0-based). */
  delay(attempt: number): number;
}

/** Exponential backoff with equal jitter: half fixed, half random, capped. */
export function exponentialBackoff(
  options: { initialMs?: number; maxMs?: number; random?: () => number } = {},
): Backoff {
  const initial = options.initialMs ?? 250;
  const max = options.maxMs ?? 30_000;
  const random = options.random ?? Math.random;
  return {
    delay(attempt) {
      const ceiling = Math.min(max, initial * 2 ** Math.min(attempt, 20));
      return ceiling / 2 + random() * (ceiling / 2);
    },
  };
}

export interface ListWatchDependencies {
  transport: WatchTransport;
  backoff?: Backoff;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Server-side watch timeout; the watch then resumes from the last resourceVersion. */
  watchTimeoutSeconds?: () => number;
  pageSize?: number;
}

let openWatches = 0;

/** Number of list-watch loops currently running in this process (tests assert on sharing). */
export function openWatchCount(): number {
  return openWatches;
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function resourceVersionOf(object: unknown): string | undefined {
  const metadata = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata;
  return typeof metadata?.resourceVersion === "string" ? metadata.resourceVersion : undefined;
}

/** Raised inside the stream when the server sends an ERROR event; ends that watch. */
class WatchErrorEvent extends Error {
  constructor(readonly error: K8sError) {
    super(error.message);
  }
}

/** The list-watch loop over any transport (see listAndWatch for the real one). */
export function createListWatch<T>(
  options: ListWatchOptions,
  handlers: WatchHandlers<T>,
  dependencies: ListWatchDependencies,
): ListWatch {
  const { transport } = dependencies;
  const backoff = dependencies.backoff ?? exponentialBackoff();
  const sleep = dependencies.sleep ?? abortableSleep;
  const timeoutSeconds = dependencies.watchTimeoutSeconds ?? (() => 300 + Math.floor(Math.random() * 300));
  const pageSize = dependencies.pageSize ?? 500;
  const stopped = new AbortController();
  let resourceVersion = "";
  let needsList = true;
  let attempt = 0;
  const selectors = { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };

  const report = (error: K8sError) => {
    if (stopped.signal.aborted) return;
    try {
      handlers.onError?.(error);
    } catch {
      // A failing error handler must not kill the loop.
    }
  };

  async function list(): Promise<void> {
    const items: unknown[] = [];
    let token: string | undefined;
    let listVersion = "";
    do {
      const page = await transport.list(
        options.path,
        { ...selectors, limit: String(pageSize), continue: token },
        stopped.signal,
      );
      items.push(...page.items);
      listVersion = page.resourceVersion;
      token = page.continue || undefined;
    } while (token && !stopped.signal.aborted);
    if (stopped.signal.aborted) return;
    resourceVersion = listVersion;
    needsList = false;
    handlers.onSync(items as T[], resourceVersion);
  }

  async function watchOnce(): Promise<void> {
    const connection = new AbortController();
    const abortConnection = () => connection.abort();
    stopped.signal.addEventListener("abort", abortConnection, { once: true });
    let eventError: K8sError | undefined;
    try {
      await transport.watch(
        options.path,
        {
          ...selectors,
          watch: "true",
          resourceVersion,
          allowWatchBookmarks: "true",
          timeoutSeconds: String(timeoutSeconds()),
        },
        (event) => {
          if (stopped.signal.aborted || eventError) return;
          if (event.type === "ERROR") {
            const status = statusBody(event.object);
            eventError = errorFromResponse(status?.code ?? 500, event.object);
            connection.abort();
            throw new WatchErrorEvent(eventError);
          }
          const version = resourceVersionOf(event.object);
          if (event.type === "BOOKMARK") {
            if (version) resourceVersion = version;
            attempt = 0;
            return;
          }
          if (event.type !== "ADDED" && event.type !== "MODIFIED" && event.type !== "DELETED") return;
          if (version) resourceVersion = version;
          attempt = 0;
          handlers.onEvent(event.type, event.object as T);
        },
        connection.signal,
      );
    } catch (error) {
      if (eventError) throw eventError;
      if (error instanceof WatchErrorEvent) throw error.error;
      throw error;
    } finally {
      stopped.signal.removeEventListener("abort", abortConnection);
    }
    if (eventError) throw eventError;
  }

  async function run(): Promise<void> {
    while (!stopped.signal.aborted) {
      try {
        if (needsList) await list();
        else await watchOnce();
        // A watch the server ended normally (timeoutSeconds) resumes right away.
      } catch (thrown) {
        if (stopped.signal.aborted) break;
        const error = toK8sError(thrown);
        if (isGone(error)) {
          // The resourceVersion was compacted away: nothing to resume from, relist.
          needsList = true;
          if (resourceVersion) {
            resourceVersion = "";
            continue;
          }
        }
        report(error);
        await sleep(backoff.delay(attempt++), stopped.signal);
      }
    }
  }

  openWatches++;
  void run().finally(() => {
    openWatches--;
  });

  return {
    stop: () => stopped.abort(),
    resourceVersion: () => resourceVersion,
  };
}

/** The real transport: paged LIST and a streaming WATCH over the connection's API server. */
export function clusterWatchTransport(conn: ClusterConnection): WatchTransport {
  return {
    async list(path, query, signal) {
      const body = await kubeRequest<{
        items?: unknown[];
        metadata?: { resourceVersion?: string; continue?: string };
      }>(conn, { path, query, signal, timeoutMs: 60_000 });
      return {
        items: body.items ?? [],
        resourceVersion: body.metadata?.resourceVersion ?? "",
        ...(body.metadata?.continue ? { continue: body.metadata.continue } : {}),
      };
    },
    async watch(path, query, onEvent, signal) {
      const stream = await kubeStream(conn, { path, query, signal });
      const reader = stream.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffered += decoder.decode(value, { stream: true });
          let newline = buffered.indexOf("\n");
          while (newline >= 0) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (line) onEvent(JSON.parse(line) as RawWatchEvent);
            newline = buffered.indexOf("\n");
          }
        }
      } catch (error) {
        // Ending the stream ourselves (stop, or an ERROR event) is not a transport failure.
        if (!signal.aborted) throw toK8sError(error, conn.server);
        if (error instanceof WatchErrorEvent) throw error;
      } finally {
        reader.cancel().catch(() => {});
      }
    },
  };
}

/**
 * LIST `options.path`, then WATCH it from the list's resourceVersion, resuming after drops and
 * relisting after 410. Handlers run synchronously in stream order. Call stop() to end it.
 */
export function listAndWatch<T>(
  conn: ClusterConnection,
  options: ListWatchOptions,
  handlers: WatchHandlers<T>,
): ListWatch {
  return createListWatch(options, handlers, { transport: clusterWatchTransport(conn) });
}
