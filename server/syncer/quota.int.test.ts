/**
 * The syncer as the quota backstop (issue 7) on real parts: a tenant control plane whose pods got
 * in without the webhook (none is registered in this world, as for pods created before a quota was
 * set), the run's super cluster, and the syncer. A pod that would take the tenant over
 * Tenant.spec.quota is held back with a QuotaExceeded condition and event, never reaches the super
 * cluster, and goes down on its own once room appears or the quota is raised.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIMULATED_POD_LABEL } from "@/server/cluster/simulated-pods";
import { createObject, deleteObject, type KubeObject } from "@/server/k8s/apply";
import { listEventsFor } from "@/server/k8s/events";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { tenantApiVersion } from "@/server/tenants/tenant-resources";
import { type DataPlaneWorld, startDataPlaneWorld } from "@/test/integration/data-plane-world";
import { parseIsolationPolicy } from "./isolation-schema";
import { superNamespace } from "./naming";
import { quotaConditionType } from "./quota-hold";
import { createSyncer, type Syncer } from "./syncer";
import { type Obj, readOrUndefined, ref } from "./test-world";

const logger = createLogger({ service: "syncer-quota-it" }, "error");
const tenant = `sq-${Math.random().toString(36).slice(2, 7)}`;
const namespace = "work";
let world: DataPlaneWorld;
/** The syncer of the default share tests (the world's, plus namespaceDefaultShare). */
let defaultShareSyncer: Syncer | undefined;

const pod = (name: string, cpu: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace },
  spec: {
    containers: [{ name: "main", image: "nginx", resources: { requests: { cpu }, limits: { cpu } } }],
    terminationGracePeriodSeconds: 0,
  },
});

async function setQuota(hard: Record<string, string> | null): Promise<void> {
  await kubeRequest(world.superCluster, {
    method: "PATCH",
    path: `/apis/${tenantApiVersion}/tenants/${tenant}`,
    contentType: "application/merge-patch+json",
    body: { spec: { quota: hard ? { hard } : null } },
  });
}

const below = (name: string) =>
  readOrUndefined<Obj>(world.superCluster, ref("Pod", name, superNamespace(tenant, namespace)));

async function tenantPod(name: string): Promise<Obj> {
  return (await readOrUndefined<Obj>(world.admin[tenant] as never, ref("Pod", name, namespace))) as Obj;
}

function quotaCondition(object: Obj): { status?: string; message?: string } | undefined {
  const conditions = ((object.status as { conditions?: Array<{ type: string }> } | undefined)?.conditions ??
    []) as Array<{ type: string; status?: string; message?: string }>;
  return conditions.find((condition) => condition.type === quotaConditionType);
}

beforeAll(async () => {
  world = await startDataPlaneWorld({ tenants: [tenant], logger, name: "syncer-quota-it" });
  const conn = world.admin[tenant];
  if (!conn) throw new Error("no tenant connection");
  // The quota before any pod: the syncer's tenant informer has it long before the first pod syncs.
  await setQuota({ "requests.cpu": "1" });
  await createObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
}, 300_000);

afterAll(async () => {
  await defaultShareSyncer?.stop();
  await world?.stop();
}, 120_000);

describe("syncer quota backstop", () => {
  it("holds a pod that would exceed the tenant quota, with a QuotaExceeded condition and event", async () => {
    const conn = world.admin[tenant] as never;
    await createObject(conn, pod("first", "600m"));
    await eventually(() => below("first"), 60_000);
    await createObject(conn, pod("second", "600m"));
    const held = await eventually(async () => {
      const current = await tenantPod("second");
      return quotaCondition(current)?.status === "True" ? current : undefined;
    }, 60_000);
    expect(quotaCondition(held)?.message).toContain("requests.cpu: requested 600m, used 600m, limited 1");
    expect(await below("second")).toBeUndefined();
    const events = await listEventsFor(conn, { kind: "Pod", name: "second", namespace });
    expect(events.some((event) => event.reason === "QuotaExceeded")).toBe(true);
  }, 120_000);

  it("lets the held pod go on its own when the quota is raised", async () => {
    await setQuota({ "requests.cpu": "2" });
    await eventually(() => below("second"), 60_000);
    // The condition goes (the status then comes up from the super cluster as it is there); the
    // event stays.
    await eventually(
      async () => (quotaCondition(await tenantPod("second"))?.status !== "True" ? true : undefined),
      30_000,
    );
    const events = await listEventsFor(world.admin[tenant] as never, {
      kind: "Pod",
      name: "second",
      namespace,
    });
    expect(events.find((event) => event.reason === "QuotaAvailable")?.message).toContain(
      "has room for this pod now",
    );
  }, 120_000);

  it("lets a held pod go when another pod's deletion makes room", async () => {
    const conn = world.admin[tenant] as never;
    await createObject(conn, pod("third", "900m"));
    await eventually(
      async () => (quotaCondition(await tenantPod("third"))?.status === "True" ? true : undefined),
      60_000,
    );
    expect(await below("third")).toBeUndefined();
    await deleteObject(conn, ref("Pod", "first", namespace), { gracePeriodSeconds: 0 });
    await eventually(() => below("third"), 60_000);
  }, 120_000);

  it("keeps a pod below at its size when a resize would exceed the quota, and resizes it once there is room", async () => {
    const conn = world.admin[tenant] as never;
    // Quota 2 CPUs; second (600m) and third (900m) run: 1.5 used. A pod waiting for a node that
    // does not exist (API servers resize a pod only while no container of it runs, on simulated
    // nodes) takes 100m, then asks for 1 CPU more than there is room for.
    const waiting = pod("growing", "100m");
    (waiting.spec as { nodeSelector?: Record<string, string> }).nodeSelector = {
      "example.com/no-such-node": "true",
    };
    await createObject(conn, waiting);
    await eventually(() => below("growing"), 60_000);
    const resize = (cpu: string) =>
      kubeRequest(conn, {
        method: "PATCH",
        path: `/api/v1/namespaces/${namespace}/pods/growing/resize`,
        contentType: "application/strategic-merge-patch+json",
        body: { spec: { containers: [{ name: "main", resources: { requests: { cpu }, limits: { cpu } } }] } },
      });
    await resize("1");
    const held = await eventually(async () => {
      const current = await tenantPod("growing");
      return quotaCondition(current)?.status === "True" ? current : undefined;
    }, 60_000);
    expect(quotaCondition(held)?.message).toContain("keeps the running pod at its size");
    const cpuBelow = async () => {
      const spec = (await below("growing"))?.spec as
        | { containers: { resources: { requests: { cpu: string } } }[] }
        | undefined;
      return spec?.containers[0]?.resources.requests.cpu;
    };
    expect(await cpuBelow()).toBe("100m");
    // Room appears: the resize goes down.
    await setQuota({ "requests.cpu": "3" });
    await eventually(async () => ((await cpuBelow()) === "1" ? true : undefined), 60_000);
  }, 120_000);
});

describe("default namespace share", () => {
  const fresh = "fresh";
  const resourceQuotas = async (ns: string) =>
    (
      await kubeRequest<{ items: Obj[] }>(world.admin[tenant] as never, {
        path: `/api/v1/namespaces/${ns}/resourcequotas`,
      })
    ).items;

  beforeAll(async () => {
    // The world's syncer again, now with the tenant's default share (Ring0 reads it from the database).
    await world.syncer.stop();
    defaultShareSyncer = createSyncer({
      superCluster: world.superCluster,
      directory: world.directory,
      logger,
      heartbeatIntervalMs: 2_000,
      tenantRecheckMs: 1_000,
      superPodLabels: { [SIMULATED_POD_LABEL]: "true" },
      tenantFilter: (name) => name === tenant,
      namespaceDefaultShare: async (name) =>
        name === tenant ? { "requests.cpu": "500m", pods: "5" } : undefined,
      // Tenant namespace labels reach below only when allow-listed: "touched" marks a reconcile.
      isolationPolicy: parseIsolationPolicy({ namespaceLabels: ["touched"] }),
    });
    await defaultShareSyncer.start();
  }, 120_000);

  it("gives a new namespace without a ResourceQuota a default-share one, unprotected", async () => {
    const conn = world.admin[tenant] as never;
    await createObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: fresh } });
    const [quota] = await eventually(async () => {
      const items = await resourceQuotas(fresh);
      return items.length > 0 ? items : undefined;
    }, 60_000);
    expect(quota?.metadata.name).toBe("default-share");
    expect(quota?.metadata.labels).toEqual({
      "app.kubernetes.io/managed-by": "ring0",
      "ring0.dev/default-share": "true",
    });
    expect((quota as { spec?: unknown }).spec).toEqual({ hard: { "requests.cpu": "500m", pods: "5" } });
  }, 120_000);

  it("leaves it to the tenant admin: a deleted default-share is not brought back", async () => {
    const conn = world.admin[tenant] as never;
    await deleteObject(conn, ref("ResourceQuota", "default-share", fresh));
    // A change of the namespace is reconciled (its copy below gets the label) without a new quota.
    await kubeRequest(conn, {
      method: "PATCH",
      path: `/api/v1/namespaces/${fresh}`,
      contentType: "application/merge-patch+json",
      body: { metadata: { labels: { touched: "yes" } } },
    });
    await eventually(async () => {
      const below = await readOrUndefined<Obj>(
        world.superCluster,
        ref("Namespace", superNamespace(tenant, fresh)),
      );
      return below?.metadata.labels?.touched === "yes" ? true : undefined;
    }, 60_000);
    expect(await resourceQuotas(fresh)).toEqual([]);
  }, 120_000);
});
