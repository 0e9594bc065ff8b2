import { describe, expect, it } from "vitest";
import { syncAnnotations } from "./contracts";
import { defaultIsolationPolicy } from "./isolation-schema";
import { podDrift } from "./patroller";
import { boundNodeAnnotation, type Obj } from "./session";
import { type Json, maxObjectBytes } from "./synced-kinds";
import { superObject, withSyncHash } from "./translate";

const settings = { tenant: "acme", placement: {}, policy: defaultIsolationPolicy() };

const pod = (spec: Json = {}, status: Json = {}, metadata: Partial<Obj["metadata"]> = {}): Obj => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "team", uid: "uid-1", ...metadata },
  spec: { containers: [{ name: "main", image: "nginx" }], ...spec },
  status,
});

/** The copy the syncer writes below for `tenantPod`, as the super cluster then reports it. */
const copyOf = (tenantPod: Obj, below: { nodeName?: string; status?: Json } = {}): Obj => {
  const written = withSyncHash(superObject("acme", "pod", tenantPod, {})) as Obj;
  return {
    ...written,
    spec: { ...(written.spec as Json), ...(below.nodeName ? { nodeName: below.nodeName } : {}) },
    status: below.status ?? {},
  };
};

const running = { phase: "Running", podIP: "10.0.0.7" };
const boundTo = (node: string) => ({
  spec: { nodeName: node },
  metadata: { annotations: { [boundNodeAnnotation]: node } },
});

describe("patroller: how a tenant pod and its copy below disagree", () => {
  it("finds nothing when the copy matches and the status is the copy's", () => {
    const bound = boundTo("n0");
    const tenantPod = pod(bound.spec, running, bound.metadata);
    expect(podDrift(tenantPod, copyOf(tenantPod, { nodeName: "n0", status: running }), settings)).toBeNull();
  });

  it("reports a pod with no copy below as missing", () => {
    expect(podDrift(pod(), undefined, settings)).toBe("missing");
  });

  it("reports a pod Ring0 bound whose copy is gone as evicted (not missing: it must not come back)", () => {
    const bound = boundTo("n0");
    expect(podDrift(pod(bound.spec, running, bound.metadata), undefined, settings)).toBe("evicted");
  });

  it("leaves finished, refused and malformed pods without a copy alone", () => {
    expect(podDrift(pod({}, { phase: "Succeeded" }), undefined, settings)).toBeNull();
    expect(podDrift(pod({}, { phase: "Failed" }), undefined, settings)).toBeNull();
    const privileged = pod({
      containers: [{ name: "main", image: "nginx", securityContext: { privileged: true } }],
    });
    expect(podDrift(privileged, undefined, settings)).toBeNull();
    const huge = pod({}, {}, { annotations: { blob: "x".repeat(maxObjectBytes + 1) } });
    expect(podDrift(huge, undefined, settings)).toBeNull();
  });

  it("finds a privileged pod missing once the operator relaxed that rule", () => {
    const privileged = pod({
      containers: [{ name: "main", image: "nginx", securityContext: { privileged: true } }],
    });
    const relaxed = {
      ...settings,
      policy: {
        ...settings.policy,
        enabled: settings.policy.enabled.filter((rule) => rule !== "privileged"),
      },
    };
    expect(podDrift(privileged, undefined, relaxed)).toBe("missing");
  });

  it("reports a copy of an earlier pod of the same name as stale", () => {
    const earlier = copyOf(pod());
    const copy = {
      ...earlier,
      metadata: {
        ...earlier.metadata,
        annotations: { ...earlier.metadata.annotations, [syncAnnotations.uid]: "uid-0" },
      },
    };
    expect(podDrift(pod(), copy, settings)).toBe("stale");
  });

  it("reports a copy that no longer matches the tenant's pod as changed", () => {
    const copy = copyOf(pod());
    const relabelled = pod({}, {}, { labels: { app: "web", tier: "front" } });
    expect(podDrift(relabelled, copy, settings)).toBe("changed");
    // …and the placement the operator set is part of what the pod translates to.
    const placed = { ...settings, placement: { nodeSelector: { pool: "a" } } };
    expect(podDrift(pod(), copy, placed)).toBe("changed");
  });

  it("reports a copy scheduled below whose tenant pod is not bound yet as unbound", () => {
    const tenantPod = pod();
    expect(podDrift(tenantPod, copyOf(tenantPod, { nodeName: "n1" }), settings)).toBe("unbound");
  });

  it("reports a status that differs from the copy's", () => {
    const bound = boundTo("n0");
    const tenantPod = pod(bound.spec, { phase: "Pending" }, bound.metadata);
    expect(podDrift(tenantPod, copyOf(tenantPod, { nodeName: "n0", status: running }), settings)).toBe(
      "status",
    );
  });
});

describe("patroller: the tenant's Pod Security level", () => {
  it("does not count a pod its level refuses as missing below", () => {
    const plain = pod();
    expect(podDrift(plain, undefined, settings)).toBe("missing");
    const restricted = { ...settings, policy: { ...settings.policy, podSecurity: "restricted" as const } };
    expect(podDrift(plain, undefined, restricted)).toBeNull();
  });
});

describe("patroller: a change of a running pod the filter refuses", () => {
  it("is not drift: the copy stays as it was", () => {
    const bound = boundTo("n0");
    const tenantPod = pod(bound.spec, running, bound.metadata);
    const copy = copyOf(tenantPod, { nodeName: "n0", status: running });
    const tolerant = pod({ ...bound.spec, tolerations: [{ operator: "Exists" }] }, running, bound.metadata);
    expect(podDrift(tolerant, copy, settings)).toBeNull();
    const allowed = pod(
      { ...bound.spec, tolerations: [{ key: "node.kubernetes.io/unreachable", operator: "Exists" }] },
      running,
      bound.metadata,
    );
    expect(podDrift(allowed, copy, settings)).toBe("changed");
  });
});
