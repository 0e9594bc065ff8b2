/**
 * Requests to a tenant's control plane on behalf of a Ring0 user, for Ring0's own pages (the
 * portal's namespaces). They take the gateway's path to the tenant: the control plane directory,
 * the admin TLS identity in a per-tenant agent, and the same impersonation the gateway sets, so
 * the tenant's RBAC decides exactly as it does for that user's kubectl. Nothing of the admin
 * access leaves this module; failures are K8sErrors carrying the control plane's own Status.
 */
import https from "node:https";
import type { SessionUser } from "@/server/auth/roles";
import { UnavailableError } from "@/server/errors";
import { errorFromResponse, K8sError, toK8sError } from "@/server/k8s/errors";
import {
  type ControlPlaneDirectory,
  type ControlPlaneLookup,
  getControlPlaneDirectory,
} from "@/server/tenants/control-planes";
import { kubeGroupsFor, kubeUserName } from "@/server/tenants/kube-identity";
import { type Impersonation, upstreamRequestHeaders } from "./headers";
import { createUpstreamPool, UpstreamConfigError } from "./upstream";

/** Who `user` is inside `tenant`'s control plane: what the gateway impersonates for their token. */
export function impersonationOf(tenant: string, user: Pick<SessionUser, "subject" | "role">): Impersonation {
  return { user: kubeUserName(tenant, user.subject), groups: kubeGroupsFor(tenant, user.role) };
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
}

export interface ControlPlaneClientOptions {
  /** Defaults to the directory the runtime installed. */
  directory?: () => ControlPlaneDirectory | null;
}

/** A client per module graph; its agents follow rotated access like the gateway's do. */
export function createControlPlaneClient(options: ControlPlaneClientOptions = {}) {
  const directory = options.directory ?? getControlPlaneDirectory;
  const pool = createUpstreamPool({ maxSocketsPerTenant: 16 });

  async function serving(tenant: string): Promise<Extract<ControlPlaneLookup, { state: "ready" }>> {
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
        `The control plane of tenant "${tenant}" is ${found.phase}: ${found.message}`,
      );
    }
    return found;
  }

  return {
    /** The parsed JSON answer; a non-2xx answer is a K8sError with the control plane's Status. */
    async request<T>(
      tenant: string,
      user: Pick<SessionUser, "subject" | "role">,
      request: ControlPlaneRequest,
    ): Promise<T> {
      const { access } = await serving(tenant);
      let upstream: ReturnType<typeof pool.get>;
      try {
        upstream = pool.get(tenant, access);
      } catch (error) {
        if (error instanceof UpstreamConfigError)
          throw new UnavailableError(
            `The control plane of tenant "${tenant}" is misconfigured (its server is not https).`,
          );
        throw error;
      }
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
        outgoing.on("error", (error) => reject(toK8sError(error, `of tenant "${tenant}"`)));
        outgoing.end(body);
      });
    },

    close(): void {
      pool.close();
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
