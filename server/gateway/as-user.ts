/**
 * Requests to a tenant's control plane on behalf of a Ring0 user, for Ring0's own pages (the
 * portal's namespaces). They take the gateway's path to the tenant: the control plane directory,
 * the admin TLS identity in a per-tenant agent, and the same impersonation the gateway sets, so
 * the tenant's RBAC decides exactly as it does for that user's kubectl. Nothing of the admin
 * access leaves this module; failures are K8sErrors carrying the control plane's own Status.
 */
import type { ClientRequest, IncomingMessage } from "node:http";
import https from "node:https";
import WebSocket from "ws";
import type { SessionUser } from "@/server/core/roles";
import { UnavailableError } from "@/server/errors";
import { errorFromResponse, K8sError, toK8sError } from "@/server/k8s/errors";
import type { WatchTransport } from "@/server/k8s/watch";
import { actsAsGrantee } from "@/server/sharing/access";
import {
  type ControlPlaneDirectory,
  type ControlPlaneLookup,
  getControlPlaneDirectory,
} from "@/server/tenants/control-planes";
import { granteeIdentity, kubeGroupsFor, kubeUserName } from "@/server/tenants/kube-identity";
import { type Impersonation, upstreamRequestHeaders } from "./headers";
import { createUpstreamPool, type Upstream, UpstreamConfigError, type UpstreamPool } from "./upstream";

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

/**
 * Who `user` is inside `tenant`'s control plane: what the gateway impersonates for their token. A
 * user of another tenant (reaching it through a sharing grant, checked before this is asked) is
 * their grantee identity, which only the grant's RoleBindings name.
 */
export function impersonationOf(tenant: string, user: KubeActor): Impersonation {
  if (actsAsGrantee(user, tenant)) return granteeIdentity(user);
  return { user: kubeUserName(tenant, user.subject), groups: kubeGroupsFor(tenant, user.role) };
}

/** What the control plane needs to know of a Ring0 user to act as them. */
export type KubeActor = Pick<SessionUser, "subject" | "role" | "tenant">;

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

export interface ControlPlaneClientOptions {
  /** Defaults to the directory the runtime installed. */
  directory?: () => ControlPlaneDirectory | null;
}

/** A client per module graph; its agents follow rotated access like the gateway's do. */
export function createControlPlaneClient(options: ControlPlaneClientOptions = {}) {
  const directory = options.directory ?? getControlPlaneDirectory;
  const pool = createUpstreamPool({ maxSocketsPerTenant: 16 });
  // Watches hold their connection for minutes: on agents of their own, so open pages can never
  // use up the sockets the short requests queue for.
  const watchPool = createUpstreamPool();

  async function serving(
    tenant: string,
    user: KubeActor,
  ): Promise<Extract<ControlPlaneLookup, { state: "ready" }>> {
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
        actsAsGrantee(user, tenant)
          ? `The control plane of tenant "${tenant}" is not serving right now (${found.phase}); try again later.`
          : `The control plane of tenant "${tenant}" is ${found.phase}: ${found.message}`,
      );
    }
    return found;
  }

  async function upstreamOf(tenant: string, user: KubeActor, from: UpstreamPool): Promise<Upstream> {
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
    async request<T>(tenant: string, user: KubeActor, request: ControlPlaneRequest): Promise<T> {
      const upstream = await upstreamOf(tenant, user, pool);
      const body = request.body === undefined ? undefined : JSON.stringify(request.body);
      const headers = upstreamRequestHeaders(
        {
          accept: "application/json",
          ...(body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }),
        },
        { impersonate: impersonationOf(tenant, user), host: upstream.url.host, upgrade: false },
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
      user: KubeActor,
      path: string,
      onEvent: (event: ControlPlaneWatchEvent) => void,
      signal: AbortSignal,
    ): Promise<void> {
      const upstream = await upstreamOf(tenant, user, watchPool);
      if (signal.aborted) return;
      const headers = upstreamRequestHeaders(
        { accept: "application/json" },
        { impersonate: impersonationOf(tenant, user), host: upstream.url.host, upgrade: false },
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
    async streaming(tenant: string, user: KubeActor): Promise<StreamUpstream> {
      const upstream = await upstreamOf(tenant, user, watchPool);
      const { access } = await serving(tenant, user);
      const impersonate = impersonationOf(tenant, user);
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

export type ControlPlaneClient = ReturnType<typeof createControlPlaneClient>;

let shared: ControlPlaneClient | undefined;

/**
 * The client of this module graph (one agent per tenant, shared by its requests). Deliberately not
 * on globalThis: the errors it throws must be this graph's K8sError and UnavailableError classes,
 * or the tRPC error mapping of another graph (route handlers vs. server components) would not
 * recognise them.
 */
export function controlPlaneClient(): ControlPlaneClient {
  shared ??= createControlPlaneClient();
  return shared;
}

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
export function controlPlaneWatchTransport(
  tenant: string,
  user: KubeActor,
  client: ControlPlaneClient = controlPlaneClient(),
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

/** Streaming requests to one API server (ControlPlaneClient.streaming, and the super cluster's). */
export interface StreamUpstream {
  /** Who answers, for messages: `tenant "acme"`, `the super cluster`. */
  label: string;
  /** A GET whose body streams; a non-2xx answer rejects with a K8sError carrying the Status. */
  get(path: string, signal: AbortSignal): Promise<IncomingMessage>;
  /** A WebSocket (exec, attach) with the given subprotocols. */
  webSocket(path: string, protocols: string[]): WebSocket;
}

/** Opens a GET and resolves with the response once its status is 2xx (the body then streams). */
export function streamingGet(
  options: https.RequestOptions,
  signal: AbortSignal,
  where: string,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const outgoing = https.request({ ...options, method: "GET", signal }, (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        resolve(response);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= 65_536) chunks.push(chunk);
      });
      response.on("error", (error) => reject(toK8sError(error, where)));
      response.on("end", () => reject(errorFromResponse(status, Buffer.concat(chunks).toString("utf8"))));
    });
    // No response timeout: a followed log of a quiet container sends its headers with its first
    // line, which may be hours away. The caller's signal ends it (the browser went away).
    outgoing.on("error", (error) => reject(toK8sError(error, where)));
    outgoing.end();
  });
}
