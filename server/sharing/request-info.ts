/**
 * What a Kubernetes API request asks for, in RBAC's terms (the API server's RequestInfoFactory, for
 * the paths a grant can cover): verb, API group, namespace, resource, subresource and name. The
 * gateway decides a grantee's request from these before anything reaches the owner's control
 * plane. Paths are the gateway's apiPath: still percent-encoded, already checked for dot segments
 * and encoded separators (server/gateway/path.ts).
 */

export type RequestAttributes =
  | {
      kind: "resource";
      verb: string;
      apiGroup: string;
      apiVersion: string;
      /** "" for cluster-scoped requests (and lists across all namespaces). */
      namespace: string;
      resource: string;
      /** "" when the request is for the resource itself. */
      subresource: string;
      /** "" for collections (list, watch, create, deletecollection). */
      name: string;
    }
  /** Discovery and other non-resource paths: /api, /apis/apps, /version, /openapi/v3… */
  | { kind: "non-resource"; verb: string; path: string }
  | { kind: "invalid"; reason: string };

/** Subresources that open a stream over an upgrade: authorised as `create`, whatever the method. */
export const connectSubresources = new Set(["exec", "attach", "portforward"]);

const namespaceSubresources = new Set(["status", "finalize"]);

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const methodVerbs: Record<string, string> = {
  POST: "create",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
  GET: "get",
  HEAD: "get",
};

/**
 * A boolean query parameter as the API server reads it (apimachinery's Convert_Slice_string_To_bool,
 * for its handlers and its RequestInfo alike): absent is false; "0" and "false" under Unicode case
 * folding (so "FALSE", and "falſe" with a long s) are false; anything else, "f" and "" included, is
 * true.
 */
export function queryFlag(value: string | null): boolean {
  if (value === null) return false;
  return !(value === "0" || value.toLowerCase().replace(/\u017f/g, "s") === "false");
}

/**
 * The name a field selector requires (`metadata.name=<n>` or `==`, alone or among other terms), as
 * the API server's RequiresExactMatch reads it; "" when it requires none or the name is not one a
 * path could carry. The value is already decoded once by URLSearchParams: it is not decoded again.
 */
function selectedName(selector: string | null): string {
  if (!selector || selector.includes("\\")) return "";
  for (const term of selector.split(",")) {
    const value = /^metadata\.name==?(.*)$/.exec(term)?.[1];
    if (value === undefined) continue;
    if (!value || value === "." || value === ".." || /[/%=]/.test(value)) return "";
    return value;
  }
  return "";
}

/**
 * The request's attributes. `upgrade` is a connection upgrade (WebSocket or SPDY): exec, attach and
 * port-forward are then `create`, as the API server authorises them.
 */
export function requestAttributes(
  method: string,
  apiPath: string,
  query: URLSearchParams,
  upgrade = false,
): RequestAttributes {
  const upper = method.toUpperCase();
  const baseVerb = methodVerbs[upper];
  if (!baseVerb) return { kind: "invalid", reason: `method ${upper} is not a Kubernetes API verb` };
  const segments = apiPath.split("/").filter(Boolean).map(decode);
  let rest: string[];
  let apiGroup: string;
  let apiVersion: string;
  if (segments[0] === "api" && segments.length >= 2) {
    apiGroup = "";
    apiVersion = segments[1] ?? "";
    rest = segments.slice(2);
  } else if (segments[0] === "apis" && segments.length >= 3) {
    apiGroup = segments[1] ?? "";
    apiVersion = segments[2] ?? "";
    rest = segments.slice(3);
  } else {
    return { kind: "non-resource", verb: baseVerb, path: `/${segments.join("/")}` };
  }
  if (rest.length === 0) return { kind: "non-resource", verb: baseVerb, path: `/${segments.join("/")}` };

  let verb = baseVerb;
  if (rest[0] === "watch") {
    if (upper !== "GET") return { kind: "invalid", reason: "watch paths take GET only" };
    verb = "watch";
    rest = rest.slice(1);
    if (rest.length === 0) return { kind: "invalid", reason: "a watch path names no resource" };
  }

  let namespace = "";
  if (rest[0] === "namespaces" && rest.length > 1) {
    // The namespace object itself (and its status, finalize) has both name and namespace set.
    namespace = rest[1] ?? "";
    if (rest.length > 2 && !namespaceSubresources.has(rest[2] ?? "")) rest = rest.slice(2);
  }
  const [resource = "", name = "", subresource = "", ...extra] = rest;
  if (extra.length > 0) {
    // Only proxy subresources take a path after them (pods/<name>/proxy/<path>).
    if (subresource !== "proxy")
      return { kind: "invalid", reason: "the path has segments after its subresource" };
  }

  let effectiveName = name;
  if (verb === "watch") {
    // /watch/…/<name> watches one object: still a watch. Like the API server, a field selector does
    // not narrow these legacy watch paths.
  } else if (baseVerb === "get" && !name) {
    verb = queryFlag(query.get("watch")) ? "watch" : "list";
    // A list or watch narrowed to one name by field selector is authorised for that name.
    effectiveName = selectedName(query.get("fieldSelector"));
  } else if (baseVerb === "delete" && !name) {
    verb = "deletecollection";
  }
  if (upgrade && connectSubresources.has(subresource)) verb = "create";
  return {
    kind: "resource",
    verb,
    apiGroup,
    apiVersion,
    namespace,
    resource,
    subresource,
    name: effectiveName,
  };
}

/** `pods/log`, `deployments` — how RBAC rules and messages name a request's resource. */
export function resourceKey(attributes: { resource: string; subresource: string }): string {
  return attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
}

/**
 * Whether a raw query string could read differently to the API server than to us: Go's URL query
 * parser drops every pair with a ';' or a malformed %-escape, URLSearchParams keeps them (a field
 * selector or watch flag we authorise could then be gone upstream). Grantees' queries must be plain.
 */
export function ambiguousQuery(rawQuery: string): boolean {
  return rawQuery.includes(";") || /%(?![0-9a-fA-F]{2})/.test(rawQuery);
}
