/**
 * Requests to a tenant's control plane on behalf of a Ring0 user: how every part of Ring0 (the
 * portal's pages, the browser's streams) talks to a tenant API server as that user. They take the
 * gateway's path to the tenant: the control plane directory, the admin TLS identity in a
 * per-tenant agent, and the same impersonation the gateway sets, so the tenant's RBAC decides
 * exactly as it does for that user's kubectl. Nothing of the admin access leaves this module;
 * failures are K8sErrors carrying the control plane's own Status.
 *
 * Who a user is inside a control plane, and where the directory is, are the domains' to say:
 * both are injected (server/impersonation/as-user.ts wires the client Ring0 uses).
 */

import type { ClientRequest } from "node:http";
import https from "node:https";
import WebSocket from "ws";
import { stillStartingMessage } from "@/server/core/start-state";

import { UnavailableError } from "@/server/errors";
import { errorFromResponse, K8sError, toK8sError } from "./errors";
import { type Impersonation, upstreamRequestHeaders } from "./impersonation";
import { type StreamUpstream, streamingGet } from "./stream-upstream";
import {
  type ApiServerAccess,
  createUpstreamPool,
  type Upstream,
  UpstreamConfigError,
  type UpstreamPool,
} from "./upstream-pool";
import type { WatchTransport } from "./watch";

/** Aborting `signal` destroys the request, so its socket is not left waiting. */
function abortWith(outgoing: ClientRequest, signal: AbortSignal | undefined): void {
  if (!signal) return;
  const abort = () => outgoing.destroy(Object.assign(new Error("aborted"), { name: "AbortError" }));
  if (signal.aborted) abort();
  else {
    signal.addEventListener("abort", abort, { once: true });
    outgoing.once("close", () => signal.removeEventListener("abort", abort));
  }
}

/** Why a tenant's control plane cannot take requests now; thrown instead of a request. */
export class ControlPlaneNotServingError extends UnavailableError {
  override name = "ControlPlaneNotServingError";
  constructor(
    readonly tenant: string,
    /** "Absent" when the tenant has no Tenant object (no control plane yet). */
    readonly phase: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ControlPlaneRequest {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** API path with query, e.g. `/api/v1/namespaces?limit=500`. */
  path: string;
  body?: unknown;
  /** Default 30 s until the response has arrived. */
  timeoutMs?: number;
  /** Aborting ends the request (a K8sError "Timeout" if it was still waiting). */
  signal?: AbortSignal;
}

/** One line of a watch stream, as the API server sent it. */
export interface ControlPlaneWatchEvent {
  type: string;
  object: unknown;
}

/** Where a tenant's control plane is now (server/tenants/control-planes.ts' directory is one). */
export interface ControlPlaneLocator {
  lookup(
    tenant: string,
  ): Promise<
    | { state: "ready"; access: ApiServerAccess }
    | { state: "unavailable"; phase: string; message: string }
    | { state: "absent" }
  >;
}

/** Who a request runs as inside a tenant's control plane. */
export interface ActingAs {
  impersonate: Impersonation;
  /** A user of another tenant, through a sharing grant: told a control plane's phase, never why. */
  grantee: boolean;
}

export interface ControlPlaneClientOptions<Actor> {
  /** The directory in force (read per request: the runtime installs it at start-up). */
  directory: () => ControlPlaneLocator | null;
  /** Who `actor` is inside `tenant`'s control plane. */
  actingAs(tenant: string, actor: Actor): ActingAs;
}

/** A client per module graph; its agents follow rotated access like the gateway's do. */
export function createControlPlaneClient<Actor>(options: ControlPlaneClientOptions<Actor>) {
  const { directory, actingAs } = options;
  const pool = createUpstreamPool({ maxSocketsPerTenant: 16 });
  // Watches hold their connection for minutes: on agents of their own, so open pages can never
  // use up the sockets the short requests queue for.
  const watchPool = createUpstreamPool();

  async function serving(tenant: string, user: Actor): Promise<{ state: "ready"; access: ApiServerAccess }> {
    // Until the tenants' runtime is up (admission webhooks, Tenant informers), no request goes on.
    const starting = stillStartingMessage("tenants");
    if (starting) throw new ControlPlaneNotServingError(tenant, "Unknown", starting);
    const controlPlanes = directory();
    if (!controlPlanes) {
      throw new ControlPlaneNotServingError(
        tenant,
        "Unknown",
        "Ring0 cannot reach tenant control planes right now (no control plane directory is running). Try again shortly.",
      );
    }
    const found = await controlPlanes.lookup(tenant);
    if (found.state === "absent") {
      pool.drop(tenant);
      watchPool.drop(tenant);
      throw new ControlPlaneNotServingError(
        tenant,
        "Absent",
        `Tenant "${tenant}" has no control plane yet — ask an operator to create it.`,
      );
    }
    if (found.state === "unavailable") {
      throw new ControlPlaneNotServingError(
        tenant,
        found.phase,
        // Why it is not serving (its conditions, log lines) is the owner's and the operators' to read.
        actingAs(tenant, user).grantee
          ? `The control plane of tenant "${tenant}" is not serving right now (${found.phase}); try again later.`
          : `The control plane of tenant "${tenant}" is ${found.phase}: ${found.message}`,
      );
    }
    return found;
  }

  async function upstreamOf(tenant: string, user: Actor, from: UpstreamPool): Promise<Upstream> {
    const { access } = await serving(tenant, user);
    try {
      return from.get(tenant, access);
    } catch (error) {
      if (error instanceof UpstreamConfigError)
        throw new UnavailableError(
          `The control plane of tenant "${tenant}" is misconfigured (its server is not https).`,
        );
      throw error;
    }
  }

  return {
    /** The parsed JSON answer; a non-2xx answer is a K8sError with the control plane's Status. */
    async request<T>(tenant: string, user: Actor, request: ControlPlaneRequest): Promise<T> {
      const upstream = await upstreamOf(tenant, user, pool);
      const body = request.body === undefined ? undefined : JSON.stringify(request.body);
      const headers = upstreamRequestHeaders(
        {
          accept: "application/json",
          ...(body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }),
        },
        { impersonate: actingAs(tenant, user).impersonate, host: upstream.url.host, upgrade: false },
      );
      return new Promise<T>((resolve, reject) => {
        const outgoing = https.request(
          {
            agent: upstream.agent,
            protocol: "https:",
            hostname: upstream.url.hostname.replace(/^\[(.*)\]$/, "$1"),
            port: upstream.url.port || 443,
            method: request.method ?? "GET",
            path: upstream.basePath + request.path,
            headers,
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on("data", (chunk: Buffer) => chunks.push(chunk));
            response.on("error", (error) => reject(toK8sError(error, `of tenant "${tenant}"`)));
            response.on("end", () => {
              const text = Buffer.concat(chunks).toString("utf8");
              const status = response.statusCode ?? 0;
              if (status < 200 || status >= 300) {
                reject(errorFromResponse(status, text));
                return;
              }
              try {
                resolve((text ? JSON.parse(text) : {}) as T);
              } catch (error) {
                reject(
                  new K8sError(
                    {
                      status: 502,
                      reason: "InternalError",
                      message: `The control plane of tenant "${tenant}" answered with something that is not JSON.`,
                    },
                    { cause: error },
                  ),
                );
              }
            });
          },
        );
        outgoing.setTimeout(request.timeoutMs ?? 30_000, () =>
          outgoing.destroy(Object.assign(new Error("timed out"), { name: "TimeoutError" })),
        );
        abortWith(outgoing, request.signal);
        outgoing.on("error", (error) => reject(toK8sError(error, `of tenant "${tenant}"`)));
        outgoing.end(body);
      });
    },

    /**
     * A watch (`path` with `watch=true`) as the user: `onEvent` gets each line in stream order.
     * Resolves when the API server ends the watch (its timeoutSeconds) or `signal` aborts; rejects
     * with the control plane's Status for a non-200 answer, or a K8sError for a broken stream.
     */
    async watch(
      tenant: string,
      user: Actor,
      path: string,
      onEvent: (event: ControlPlaneWatchEvent) => void,
      signal: AbortSignal,
    ): Promise<void> {
      const upstream = await upstreamOf(tenant, user, watchPool);
      if (signal.aborted) return;
      const headers = upstreamRequestHeaders(
        { accept: "application/json" },
        { impersonate: actingAs(tenant, user).impersonate, host: upstream.url.host, upgrade: false },
      );
      await new Promise<void>((resolve, reject) => {
        const fail = (error: unknown) => {
          if (signal.aborted) resolve();
          else reject(error instanceof K8sError ? error : toK8sError(error, `of tenant "${tenant}"`));
        };
        const outgoing = https.request(
          {
            agent: upstream.agent,
            protocol: "https:",
            hostname: upstream.url.hostname.replace(/^\[(.*)\]$/, "$1"),
            port: upstream.url.port || 443,
            method: "GET",
            path: upstream.basePath + path,
            headers,
          },
          (response) => {
            const status = response.statusCode ?? 0;
            const chunks: Buffer[] = [];
            let buffered = "";
            response.on("data", (chunk: Buffer) => {
              if (status !== 200) {
                chunks.push(chunk);
                return;
              }
              buffered += chunk.toString("utf8");
              let newline = buffered.indexOf("\n");
              while (newline >= 0) {
                const line = buffered.slice(0, newline).trim();
                buffered = buffered.slice(newline + 1);
                if (line) {
                  try {
                    onEvent(JSON.parse(line) as ControlPlaneWatchEvent);
                  } catch (error) {
                    // A handler ending the watch (an ERROR event) or a line that is not JSON.
                    outgoing.destroy();
                    fail(error);
                    return;
                  }
                }
                newline = buffered.indexOf("\n");
              }
            });
            response.on("error", fail);
            response.on("end", () => {
              if (status === 200) resolve();
              else fail(errorFromResponse(status, Buffer.concat(chunks).toString("utf8")));
            });
          },
        );
        // Only the answer is timed: the API server ends the watch itself after its timeoutSeconds.
        const answer = setTimeout(
          () => outgoing.destroy(Object.assign(new Error("timed out"), { name: "TimeoutError" })),
          30_000,
        );
        outgoing.once("response", () => clearTimeout(answer));
        outgoing.once("close", () => clearTimeout(answer));
        abortWith(outgoing, signal);
        outgoing.on("error", fail);
        outgoing.end();
      });
    },

    /**
     * Streaming access to the tenant's control plane as `user` (browser logs and shells): the
     * returned object opens requests with the impersonation set; the admin TLS identity stays in
     * its closures (and the watch agents), never in what it returns.
     */
    async streaming(tenant: string, user: Actor): Promise<StreamUpstream> {
      const upstream = await upstreamOf(tenant, user, watchPool);
      const { access } = await serving(tenant, user);
      const { impersonate } = actingAs(tenant, user);
      const headers = () =>
        upstreamRequestHeaders({}, { impersonate, host: upstream.url.host, upgrade: false }) as Record<
          string,
          string
        >;
      return {
        label: `tenant "${tenant}"`,
        get: (path, signal) =>
          streamingGet(
            {
              agent: upstream.agent,
              hostname: upstream.url.hostname.replace(/^\[(.*)\]$/, "$1"),
              port: upstream.url.port || 443,
              path: upstream.basePath + path,
              headers: headers(),
            },
            signal,
            `of tenant "${tenant}"`,
          ),
        webSocket: (path, protocols) =>
          new WebSocket(`wss://${upstream.url.host}${upstream.basePath}${path}`, protocols, {
            ca: access.ca,
            cert: access.cert,
            key: access.key,
            headers: headers(),
            followRedirects: false,
            perMessageDeflate: false,
          }),
      };
    },

    close(): void {
      pool.close();
      watchPool.close();
    },
  };
}

/** A client acting as users of type `Actor` (server/impersonation/as-user.ts: Ring0's users). */
export type ControlPlaneClient<Actor> = ReturnType<typeof createControlPlaneClient<Actor>>;

function withQuery(path: string, query: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, value);
  const text = search.toString();
  return text ? `${path}${path.includes("?") ? "&" : "?"}${text}` : path;
}

/**
 * List and watch in `tenant`'s control plane as `user`, for server/k8s/watch.ts' list-watch loop:
 * the tenant's RBAC decides each list and each watch. A control plane that is not serving fails
 * the call with a ControlPlaneNotServingError (the loop wraps it as a K8sError's cause).
 */
export function watchTransportOf<Actor>(
  client: ControlPlaneClient<Actor>,
  tenant: string,
  user: Actor,
): WatchTransport {
  return {
    async list(path, query, signal) {
      const body = await client.request<{
        items?: unknown[];
        metadata?: { resourceVersion?: string; continue?: string };
      }>(tenant, user, { path: withQuery(path, query), signal, timeoutMs: 60_000 });
      return {
        items: body.items ?? [],
        resourceVersion: body.metadata?.resourceVersion ?? "",
        ...(body.metadata?.continue ? { continue: body.metadata.continue } : {}),
      };
    },
    watch: (path, query, onEvent, signal) =>
      client.watch(tenant, user, withQuery(path, query), onEvent, signal),
  };
}
