/**
 * The gateway's path layer (Arktos' `/tenants/{tenant}/…`): `/k8s/tenants/<tenant>/<rest>` names
 * `<rest>` on the tenant's own API server. Parsing is strict and happens before anything is looked
 * up, so a forged path (encoded slashes, dot segments, an odd tenant segment) can never be steered
 * at another tenant or at another part of the upstream server.
 */
import { tenantNamePattern } from "@/server/core/tenant-name";

export const gatewayPrefix = "/k8s/";
const tenantsPrefix = "/k8s/tenants/";

export type GatewayPath =
  | {
      ok: true;
      tenant: string;
      /** Path (still percent-encoded, exactly as sent) and query for the tenant's API server. */
      upstreamPath: string;
      /** The API path without query: what audit events and log lines name. */
      apiPath: string;
      query: URLSearchParams;
    }
  | { ok: false; status: 400 | 404; message: string };

/** Whether a request URL belongs to the gateway at all. */
export function isGatewayPath(url: string | undefined): boolean {
  return url === "/k8s" || (url?.startsWith(gatewayPrefix) ?? false);
}

/**
 * The roots of a Kubernetes API server's own paths. Clients that build absolute paths drop the
 * server URL's path (`kubectl get --raw /api/…`, `kubectl proxy` without `--append-server-path`):
 * on the gateway's TLS port such a path goes to the tenant of the token that sends it.
 */
const apiRoots = [
  "/api",
  "/apis",
  "/version",
  "/openapi",
  "/healthz",
  "/livez",
  "/readyz",
  "/.well-known",
  "/openid",
];

/** Whether a request URL is a Kubernetes API path without the gateway's `/k8s/tenants/<tenant>`. */
export function isUnprefixedApiPath(url: string | undefined): boolean {
  const path = (url ?? "").split("?")[0] ?? "";
  return apiRoots.some((root) => path === root || path.startsWith(`${root}/`));
}

/**
 * An unprefixed API path, parsed as strictly as a gateway path for the tenant `tenant` (the
 * token's, once it is known).
 */
export function parseUnprefixedPath(url: string | undefined, tenant: string): GatewayPath {
  if (!isUnprefixedApiPath(url)) return { ok: false, status: 404, message: "not found" };
  return parseGatewayPath(`${tenantsPrefix}${tenant}${url}`);
}

export function isValidTenantName(name: string): boolean {
  return tenantNamePattern.test(name);
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

export function parseGatewayPath(url: string | undefined): GatewayPath {
  if (!url) return { ok: false, status: 404, message: "not found" };
  const queryAt = url.indexOf("?");
  const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
  const rawQuery = queryAt === -1 ? "" : url.slice(queryAt + 1);
  // Fragments never reach a server; "#" in a request target means someone is crafting one.
  if (url.includes("#")) return { ok: false, status: 400, message: "invalid request path" };
  if (!rawPath.startsWith(tenantsPrefix)) {
    return { ok: false, status: 404, message: "not found: kube gateway paths are /k8s/tenants/<tenant>/…" };
  }
  const afterPrefix = rawPath.slice(tenantsPrefix.length);
  const slash = afterPrefix.indexOf("/");
  const tenant = slash === -1 ? afterPrefix : afterPrefix.slice(0, slash);
  const rest = slash === -1 ? "/" : afterPrefix.slice(slash);

  // Percent-escapes and dot segments are checked on the whole path, tenant segment included.
  const segments = rawPath.split("/").slice(1);
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1;
    if (segment === "" && !last)
      return { ok: false, status: 400, message: "invalid request path: empty segment" };
    if (/[\\\0]/.test(segment)) return { ok: false, status: 400, message: "invalid request path" };
    const decoded = decodeSegment(segment);
    if (decoded === null)
      return { ok: false, status: 400, message: "invalid request path: bad percent-encoding" };
    if (decoded === "." || decoded === "..") {
      return { ok: false, status: 400, message: "invalid request path: dot segments are not allowed" };
    }
    if (/[/\\\0?#]/.test(decoded)) {
      return { ok: false, status: 400, message: "invalid request path: encoded separators are not allowed" };
    }
  }
  // The tenant segment is compared raw: "gw%2Da" is not a way to spell "gw-a".
  if (!isValidTenantName(tenant)) return { ok: false, status: 404, message: "not found" };

  return {
    ok: true,
    tenant,
    upstreamPath: rawQuery ? `${rest}?${rawQuery}` : rest,
    apiPath: rest,
    query: new URLSearchParams(rawQuery),
  };
}

/**
 * Where a redirect from the tenant API server (`upstreamOrigin`, a URL's `origin`) should send the
 * client instead: the Location resolved
 * as a client would resolve it against the request (`requestPath`, as sent upstream) and kept only
 * if it stays within the tenant API server (under its base path), then given as an absolute path
 * under the gateway's prefix for the tenant. The API server's own `pods/<name>/proxy` → `…/proxy/`
 * redirect is an absolute path; a pod behind `…/proxy` may answer any Location at all, so relative
 * ones (`../../..`) are resolved, not passed on, and anything that leaves — another host, another
 * path, or a Location with whitespace, control characters or backslashes that parsers disagree on —
 * is dropped (null).
 */
export function gatewayLocation(
  location: string,
  upstreamOrigin: string,
  basePath: string,
  tenant: string,
  requestPath = "/",
): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (location === "" || /[\u0000-\u0020\u007f\\]/.test(location)) return null;
  let resolved: URL;
  try {
    resolved = new URL(
      location,
      `${upstreamOrigin}${basePath}${requestPath.startsWith("/") ? requestPath : "/"}`,
    );
  } catch {
    return null;
  }
  if (resolved.origin !== new URL(upstreamOrigin).origin || resolved.username || resolved.password)
    return null;
  const path = resolved.pathname;
  if (basePath !== "" && path !== basePath && !path.startsWith(`${basePath}/`)) return null;
  const within = path.slice(basePath.length) || "/";
  return `${gatewayPrefix}tenants/${tenant}${within}${resolved.search}${resolved.hash}`;
}
