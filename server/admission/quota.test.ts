import { describe, expect, it } from "vitest";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { createLogger } from "@/server/logger";
import { createQuotaAdmission } from "./quota";
import type { AdmissionRequest } from "./webhook-server";

const logger = createLogger({ service: "quota-test" }, "error");
const conn = { name: "fake" } as unknown as ClusterConnection;

/** A list-watch that lists nothing at once and records being stopped. */
function fakeWatches() {
  const stopped: string[] = [];
  const startWatch = ((
    _conn: unknown,
    options: { path: string },
    handlers: { onSync(items: unknown[], rv: string): void },
  ) => {
    queueMicrotask(() => handlers.onSync([], "1"));
    return { stop: () => stopped.push(options.path), resourceVersion: () => "1" };
  }) as never;
  return { stopped, startWatch };
}

const podCreate = (name: string, cpu: string, dryRun = false): AdmissionRequest => ({
  uid: name,
  kind: { group: "", version: "v1", kind: "Pod" },
  resource: { group: "", version: "v1", resource: "pods" },
  operation: "CREATE",
  namespace: "default",
  name,
  dryRun,
  object: {
    metadata: { name, namespace: "default" },
    spec: { containers: [{ name: "main", resources: { requests: { cpu }, limits: { cpu } } }] },
  },
});

describe("quota admission", () => {
  it("reserves what it admits, so the next request sees it; dry runs reserve nothing", async () => {
    const { startWatch } = fakeWatches();
    const admission = createQuotaAdmission({
      tenantQuota: async () => ({ hard: { "requests.cpu": "1" } }),
      connection: async () => conn,
      logger,
      startWatch,
    });
    try {
      expect((await admission.review("acme", podCreate("dry", "800m", true))).allowed).toBe(true);
      expect((await admission.review("acme", podCreate("a", "800m"))).allowed).toBe(true);
      const refused = await admission.review("acme", podCreate("b", "300m"));
      expect(refused).toEqual({
        allowed: false,
        message: 'exceeded tenant quota of "acme": requests.cpu: requested 300m, used 800m, limited 1',
      });
    } finally {
      admission.stop();
    }
  });

  it("ends an unused ledger's watches", async () => {
    const { stopped, startWatch } = fakeWatches();
    const admission = createQuotaAdmission({
      tenantQuota: async () => ({ hard: { "requests.cpu": "1" } }),
      connection: async () => conn,
      logger,
      startWatch,
      ledgerIdleMs: 20,
    });
    try {
      await admission.review("acme", podCreate("a", "100m"));
      expect(stopped).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 120));
      expect(stopped.sort()).toEqual(["/api/v1/pods", "/api/v1/resourcequotas"]);
    } finally {
      admission.stop();
    }
  });

  it("allows everything, and keeps no ledger, for a tenant without a quota", async () => {
    const { stopped, startWatch } = fakeWatches();
    let hard: Record<string, string> | undefined = { pods: "1" };
    const admission = createQuotaAdmission({
      tenantQuota: async () => (hard ? { hard } : undefined),
      connection: async () => conn,
      logger,
      startWatch,
    });
    try {
      await admission.review("acme", podCreate("a", "100m"));
      hard = undefined;
      expect((await admission.review("acme", podCreate("b", "100m"))).allowed).toBe(true);
      expect(stopped.length).toBeGreaterThan(0);
    } finally {
      admission.stop();
    }
  });
});
