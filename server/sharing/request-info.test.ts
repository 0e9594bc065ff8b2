import { describe, expect, it } from "vitest";
import {
  ambiguousQuery,
  connectSubresources,
  type RequestAttributes,
  requestAttributes,
  resourceKey,
} from "./request-info";

const attributes = (method: string, path: string, query = "", upgrade = false) =>
  requestAttributes(method, path, new URLSearchParams(query), upgrade);

const resource = (fields: Partial<Extract<RequestAttributes, { kind: "resource" }>>) => ({
  kind: "resource",
  apiGroup: "",
  apiVersion: "v1",
  namespace: "",
  subresource: "",
  name: "",
  ...fields,
});

describe("requestAttributes: reads", () => {
  it("a GET of one object is get", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods/web")).toEqual(
      resource({ verb: "get", namespace: "shared", resource: "pods", name: "web" }),
    );
  });

  it("a HEAD is a get too", () => {
    expect(attributes("HEAD", "/api/v1/namespaces/shared/pods/web")).toMatchObject({ verb: "get" });
  });

  it("a GET of a collection is list", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods")).toEqual(
      resource({ verb: "list", namespace: "shared", resource: "pods" }),
    );
  });

  it.each(["true", "1", "TRUE", "yes", ""])(
    "watch=%j on a collection is watch (the API server's reading)",
    (value) => {
      expect(attributes("GET", "/api/v1/namespaces/shared/pods", `watch=${value}`)).toMatchObject({
        verb: "watch",
        resource: "pods",
        name: "",
      });
    },
  );

  // As a real kube-apiserver 1.36 answers them (checked with `kubectl get --raw …?watch=<value>`).
  it.each(["false", "0", "False", "FALSE", "fal%C5%BFe"])("watch=%j on a collection stays list", (value) => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods", `watch=${value}`)).toMatchObject({
      verb: "list",
    });
  });

  it.each(["f", "F", "", "yes", "no"])("watch=%j on a collection is a watch", (value) => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods", `watch=${value}`)).toMatchObject({
      verb: "watch",
    });
  });

  it("the first watch parameter counts, as in the API server", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods", "watch=false&watch=true")).toMatchObject({
      verb: "list",
    });
  });

  it("the legacy /watch/ path of a collection is watch", () => {
    expect(attributes("GET", "/api/v1/watch/namespaces/shared/pods")).toEqual(
      resource({ verb: "watch", namespace: "shared", resource: "pods" }),
    );
  });

  it("the legacy /watch/ path of one object is a watch of that name", () => {
    expect(attributes("GET", "/apis/apps/v1/watch/namespaces/shared/deployments/web")).toEqual(
      resource({
        verb: "watch",
        apiGroup: "apps",
        namespace: "shared",
        resource: "deployments",
        name: "web",
      }),
    );
  });

  it("a /watch/ path takes GET only and must name a resource", () => {
    expect(attributes("POST", "/api/v1/watch/namespaces/shared/pods")).toMatchObject({ kind: "invalid" });
    expect(attributes("DELETE", "/api/v1/watch/pods")).toMatchObject({ kind: "invalid" });
    expect(attributes("GET", "/api/v1/watch")).toEqual({
      kind: "invalid",
      reason: "a watch path names no resource",
    });
  });

  it("a GET of one object ignores watch=true", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods/web", "watch=true")).toMatchObject({
      verb: "get",
      name: "web",
    });
  });

  it("lists across every namespace are cluster-scoped requests", () => {
    expect(attributes("GET", "/api/v1/pods")).toEqual(resource({ verb: "list", resource: "pods" }));
    expect(attributes("GET", "/apis/apps/v1/deployments", "watch=1")).toEqual(
      resource({ verb: "watch", apiGroup: "apps", resource: "deployments" }),
    );
  });
});

describe("requestAttributes: writes", () => {
  const path = "/apis/apps/v1/namespaces/shared/deployments";

  it("maps each method to its verb", () => {
    expect(attributes("POST", path)).toMatchObject({ verb: "create", name: "" });
    expect(attributes("PUT", `${path}/web`)).toMatchObject({ verb: "update", name: "web" });
    expect(attributes("PATCH", `${path}/web`)).toMatchObject({ verb: "patch", name: "web" });
    expect(attributes("DELETE", `${path}/web`)).toMatchObject({ verb: "delete", name: "web" });
  });

  it("a DELETE of a collection is deletecollection", () => {
    expect(attributes("DELETE", path)).toEqual(
      resource({ verb: "deletecollection", apiGroup: "apps", namespace: "shared", resource: "deployments" }),
    );
  });

  it("methods are case-insensitive", () => {
    expect(attributes("patch", `${path}/web`)).toMatchObject({ verb: "patch" });
  });

  it.each(["OPTIONS", "TRACE", "CONNECT", "PROPFIND", ""])("%j is not a Kubernetes verb", (method) => {
    expect(attributes(method, `${path}/web`)).toEqual({
      kind: "invalid",
      reason: `method ${method.toUpperCase()} is not a Kubernetes API verb`,
    });
  });

  it("an invalid method is refused on non-resource paths too", () => {
    expect(attributes("OPTIONS", "/version")).toMatchObject({ kind: "invalid" });
  });
});

describe("requestAttributes: scope", () => {
  it("/apis/<group>/<version>/namespaces/<ns>/<resource>/<name>", () => {
    expect(attributes("GET", "/apis/batch/v1/namespaces/jobs-ns/cronjobs/nightly")).toEqual({
      kind: "resource",
      verb: "get",
      apiGroup: "batch",
      apiVersion: "v1",
      namespace: "jobs-ns",
      resource: "cronjobs",
      subresource: "",
      name: "nightly",
    });
  });

  it("cluster-scoped objects have no namespace", () => {
    expect(attributes("GET", "/api/v1/nodes/node-1")).toEqual(
      resource({ verb: "get", resource: "nodes", name: "node-1" }),
    );
    expect(attributes("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin")).toEqual(
      resource({
        verb: "delete",
        apiGroup: "rbac.authorization.k8s.io",
        resource: "clusterroles",
        name: "admin",
      }),
    );
  });

  it("the namespace list is cluster-scoped", () => {
    expect(attributes("GET", "/api/v1/namespaces")).toEqual(
      resource({ verb: "list", resource: "namespaces" }),
    );
  });

  it("the namespace object itself carries its own name as namespace (as the API server does)", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared")).toEqual(
      resource({ verb: "get", namespace: "shared", resource: "namespaces", name: "shared" }),
    );
    expect(attributes("DELETE", "/api/v1/namespaces/shared")).toMatchObject({
      verb: "delete",
      namespace: "shared",
      resource: "namespaces",
      name: "shared",
    });
  });

  it.each(["status", "finalize"])("namespaces/<n>/%s is a subresource of the namespace", (subresource) => {
    expect(attributes("PUT", `/api/v1/namespaces/shared/${subresource}`)).toEqual(
      resource({ verb: "update", namespace: "shared", resource: "namespaces", name: "shared", subresource }),
    );
  });

  it("trailing and doubled slashes do not change the request", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods/")).toMatchObject({
      verb: "list",
      resource: "pods",
    });
  });
});

describe("requestAttributes: subresources", () => {
  it("pods/log is get on the log subresource", () => {
    const log = attributes("GET", "/api/v1/namespaces/shared/pods/web/log", "follow=true");
    expect(log).toEqual(
      resource({ verb: "get", namespace: "shared", resource: "pods", name: "web", subresource: "log" }),
    );
    expect(log.kind === "resource" && resourceKey(log)).toBe("pods/log");
  });

  it("status and scale subresources take the method's verb", () => {
    expect(attributes("PATCH", "/apis/apps/v1/namespaces/shared/deployments/web/scale")).toMatchObject({
      verb: "patch",
      resource: "deployments",
      subresource: "scale",
      name: "web",
    });
    expect(attributes("PUT", "/api/v1/namespaces/shared/pods/web/status")).toMatchObject({
      verb: "update",
      subresource: "status",
    });
  });

  it("a WebSocket exec (GET with an upgrade) is create", () => {
    expect(
      attributes("GET", "/api/v1/namespaces/shared/pods/web/exec", "command=sh&stdin=true", true),
    ).toEqual(
      resource({ verb: "create", namespace: "shared", resource: "pods", name: "web", subresource: "exec" }),
    );
  });

  it("a SPDY exec (POST with an upgrade) is create", () => {
    expect(attributes("POST", "/api/v1/namespaces/shared/pods/web/exec", "command=sh", true)).toMatchObject({
      verb: "create",
      subresource: "exec",
    });
  });

  it("an exec without an upgrade keeps its method's verb (the API server would refuse it)", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods/web/exec")).toMatchObject({ verb: "get" });
    expect(attributes("POST", "/api/v1/namespaces/shared/pods/web/exec")).toMatchObject({ verb: "create" });
  });

  it.each(["attach", "portforward"])("%s over an upgrade is create", (subresource) => {
    expect(attributes("GET", `/api/v1/namespaces/shared/pods/web/${subresource}`, "", true)).toMatchObject({
      verb: "create",
      resource: "pods",
      subresource,
    });
  });

  it("an upgrade does not turn other subresources into create", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods/web/log", "follow=true", true)).toMatchObject({
      verb: "get",
      subresource: "log",
    });
  });

  it("the connect subresources are exec, attach and portforward", () => {
    expect([...connectSubresources].sort()).toEqual(["attach", "exec", "portforward"]);
  });

  it("only proxy subresources take a path after them", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods/web/proxy/metrics/x")).toMatchObject({
      kind: "resource",
      verb: "get",
      resource: "pods",
      name: "web",
      subresource: "proxy",
    });
    expect(attributes("GET", "/api/v1/namespaces/shared/pods/web/log/extra")).toEqual({
      kind: "invalid",
      reason: "the path has segments after its subresource",
    });
  });
});

describe("requestAttributes: a field selector on metadata.name", () => {
  const pods = "/api/v1/namespaces/shared/pods";

  it("narrows a list to that name", () => {
    expect(attributes("GET", pods, "fieldSelector=metadata.name%3Dweb")).toEqual(
      resource({ verb: "list", namespace: "shared", resource: "pods", name: "web" }),
    );
  });

  it("narrows a watch to that name (kubectl get pod web -w)", () => {
    expect(attributes("GET", pods, "watch=true&fieldSelector=metadata.name%3Dweb")).toMatchObject({
      verb: "watch",
      name: "web",
    });
  });

  it("reads == and other terms as the API server does", () => {
    expect(attributes("GET", pods, "fieldSelector=metadata.name%3D%3Dweb")).toMatchObject({ name: "web" });
    expect(
      attributes("GET", pods, "fieldSelector=status.phase%3DRunning%2Cmetadata.name%3Dweb"),
    ).toMatchObject({
      name: "web",
    });
  });

  it("does not narrow for other fields, negations, or nothing at all", () => {
    expect(attributes("GET", pods, "fieldSelector=status.phase%3DRunning")).toMatchObject({ name: "" });
    expect(attributes("GET", pods, "fieldSelector=metadata.name!%3Dweb")).toMatchObject({ name: "" });
    expect(attributes("GET", pods, "fieldSelector=metadata.name%3D")).toMatchObject({ name: "" });
    expect(attributes("GET", pods, "fieldSelector=metadata.namespace%3Dshared")).toMatchObject({ name: "" });
  });

  it("decodes the value once: an encoded percent stays a percent, and names no object", () => {
    // metadata.name=%77eb after URLSearchParams; decoding again would authorise it as "web".
    expect(attributes("GET", pods, "fieldSelector=metadata.name%3D%2577eb")).toMatchObject({ name: "" });
  });

  it("does not narrow to a name no path could carry", () => {
    expect(attributes("GET", pods, "fieldSelector=metadata.name%3Da%2Fb")).toMatchObject({ name: "" });
    expect(attributes("GET", pods, "fieldSelector=metadata.name%3D..")).toMatchObject({ name: "" });
    expect(attributes("GET", pods, "fieldSelector=metadata.name%3Dw%5C%2Ceb")).toMatchObject({ name: "" });
  });

  it("does not narrow deletes, creates, or the legacy watch path (nor does the API server)", () => {
    const query = "fieldSelector=metadata.name%3Dweb";
    expect(attributes("DELETE", pods, query)).toMatchObject({ verb: "deletecollection", name: "" });
    expect(attributes("POST", pods, query)).toMatchObject({ verb: "create", name: "" });
    expect(attributes("GET", "/api/v1/watch/namespaces/shared/pods", query)).toMatchObject({
      verb: "watch",
      name: "",
    });
  });

  it("never replaces a name in the path", () => {
    expect(attributes("GET", `${pods}/web`, "fieldSelector=metadata.name%3Dother")).toMatchObject({
      verb: "get",
      name: "web",
    });
  });
});

describe("requestAttributes: non-resource paths", () => {
  it.each([
    ["/api"],
    ["/api/v1"],
    ["/apis"],
    ["/apis/apps"],
    ["/apis/apps/v1"],
    ["/version"],
    ["/openapi/v2"],
    ["/openapi/v3"],
    ["/openapi/v3/apis/apps/v1"],
    ["/healthz"],
    ["/metrics"],
    ["/"],
  ])("%s is a non-resource request", (path) => {
    expect(attributes("GET", path)).toEqual({
      kind: "non-resource",
      verb: "get",
      path: path === "/" ? "/" : path,
    });
  });

  it("the verb of a non-resource request follows the method", () => {
    expect(attributes("POST", "/apis")).toEqual({ kind: "non-resource", verb: "create", path: "/apis" });
  });

  it("a path outside /api and /apis is non-resource, even when it looks like one", () => {
    expect(attributes("GET", "/apix/apps/v1/namespaces/shared/pods")).toMatchObject({ kind: "non-resource" });
  });
});

describe("requestAttributes: percent-encoding", () => {
  it("decodes each segment", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared/configmaps/app%3Aconfig")).toMatchObject({
      resource: "configmaps",
      name: "app:config",
    });
    expect(attributes("GET", "/api/v1/namespaces/%73hared/pods/w%65b")).toMatchObject({
      namespace: "shared",
      name: "web",
    });
  });

  it("decodes before it reads the structure, as the API server does", () => {
    expect(attributes("GET", "/api/v1/%77atch/namespaces/shared/pods")).toMatchObject({ verb: "watch" });
    expect(attributes("GET", "/api/v1/n%61mespaces/shared/pods/web/%65xec", "", true)).toMatchObject({
      verb: "create",
      namespace: "shared",
      subresource: "exec",
    });
  });

  it("keeps a malformed escape as it is", () => {
    expect(attributes("GET", "/api/v1/namespaces/shared/pods/web%zz")).toMatchObject({ name: "web%zz" });
  });
});

describe("resourceKey", () => {
  it("joins a subresource with a slash", () => {
    expect(resourceKey({ resource: "pods", subresource: "log" })).toBe("pods/log");
    expect(resourceKey({ resource: "deployments", subresource: "" })).toBe("deployments");
  });
});

describe("ambiguousQuery", () => {
  it("flags what Go's query parser would drop: ';' and malformed %-escapes", () => {
    expect(ambiguousQuery("fieldSelector=metadata.name%3Dweb")).toBe(false);
    expect(ambiguousQuery("watch=1&timeoutSeconds=300")).toBe(false);
    expect(ambiguousQuery("")).toBe(false);
    expect(ambiguousQuery("fieldSelector=metadata.name=web,a=%ZZ")).toBe(true);
    expect(ambiguousQuery("watch=1;")).toBe(true);
    expect(ambiguousQuery("limit=5%")).toBe(true);
  });
});
