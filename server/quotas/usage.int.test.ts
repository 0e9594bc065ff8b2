/**
 * Ring0's usage arithmetic against Kubernetes' own: a real tenant control plane (the local
 * provisioner: etcd, kube-apiserver and kube-controller-manager 1.36), a ResourceQuota on every
 * resource, a mix of objects with awkward quantities, and the controller-manager's status.used
 * compared numerically with sumUsage of the same objects.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { killProcessesMentioning, run } from "@/server/cluster/process";
import { NANO_PER_UNIT, parseQuantity } from "@/server/core/quantity";
import { type QuotaResource, quotaResourceNames } from "@/server/core/quota-resources";
import { type ClusterConnection, connectCluster } from "@/server/k8s/cluster";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { createLocalProvisioner } from "@/server/provisioners/local";
import { kubeconfigFromAccess, type Provisioner } from "@/server/provisioners/types";
import { objectUsage, type QuotaKind, sumUsage, type Usage } from "./usage";

const logger = createLogger({}, "error");
const TENANT = "quota-exact";
const NAMESPACE = "exact";
let stateDir = "";
let provisioner: Provisioner;
let conn: ClusterConnection;

/** Every resource a namespace ResourceQuota can hold (namespaces are tenant-wide only). */
const HARD: Record<Exclude<QuotaResource, "namespaces">, string> = {
  "requests.cpu": "100",
  "limits.cpu": "100",
  "requests.memory": "100Gi",
  "limits.memory": "100Gi",
  "requests.storage": "100Gi",
  pods: "50",
  services: "50",
  persistentvolumeclaims: "50",
  configmaps: "50",
  secrets: "50",
};

const base = (path: string) => `/api/v1/namespaces/${NAMESPACE}/${path}`;

async function create(collection: string, body: object): Promise<void> {
  await kubeRequest(conn, { method: "POST", path: base(collection), body, timeoutMs: 10_000 });
}

const container = (name: string, requests?: Record<string, string>, limits?: Record<string, string>) => ({
  name,
  image: "registry.example/app:1",
  resources: { ...(requests && { requests }), ...(limits && { limits }) },
});

const both = (cpu: string, memory: string) => ({ cpu, memory });

/** Pods whose usage exercises every rule; each container sets what a quota on cpu and memory requires. */
const PODS = [
  { name: "plain", spec: { containers: [container("app", both("100m", "129M"), both("0.1", "1.5Gi"))] } },
  {
    name: "two-containers",
    spec: {
      containers: [
        container("a", both("0.25", "1e3"), both("1", "1Gi")),
        container("b", both("1e-3", "1Ki"), both("1500m", "1.5Gi")),
      ],
    },
  },
  {
    // Only limits: the API server defaults requests to them.
    name: "limits-only",
    spec: { containers: [container("app", undefined, both("333m", "100Mi"))] },
  },
  {
    // A big init container: the pod charges its peak, not the sum.
    name: "big-init",
    spec: {
      initContainers: [container("setup", both("2", "2Gi"), both("3", "3Gi"))],
      containers: [container("app", both("100m", "64Mi"), both("200m", "128Mi"))],
    },
  },
  {
    // A sidecar runs alongside everything after it, so it adds to both the init phase and the total.
    name: "sidecar",
    spec: {
      initContainers: [
        { ...container("proxy", both("150m", "50M"), both("300m", "100M")), restartPolicy: "Always" },
        container("migrate", both("1", "500Mi"), both("1", "1Gi")),
      ],
      containers: [container("app", both("200m", "200Mi"), both("400m", "400Mi"))],
    },
  },
  {
    name: "sidecar-dominates",
    spec: {
      initContainers: [
        container("tiny-init", both("10m", "1Mi"), both("10m", "1Mi")),
        { ...container("agent", both("0.7", "700Mi"), both("0.9", "900Mi")), restartPolicy: "Always" },
      ],
      containers: [container("app", both("50m", "10Mi"), both("50m", "10Mi"))],
    },
  },
  {
    // Pod-level resources replace the containers' sum (and lift the per-container requirement).
    name: "pod-level",
    spec: {
      resources: { requests: both("1.2", "1.2Gi"), limits: both("2", "2Gi") },
      containers: [container("a"), container("b", both("100m", "100Mi"))],
    },
  },
  {
    // Finished: charges nothing (its status is set below).
    name: "finished",
    spec: { containers: [container("app", both("4", "4Gi"), both("4", "4Gi"))] },
  },
];

const PVCS = [
  { name: "gi", storage: "1.5Gi" },
  { name: "decimal", storage: "129M" },
  { name: "exponent", storage: "1e3" },
  // Fractional bytes: Kubernetes rounds storage up to whole bytes.
  { name: "fractional", storage: "2500m" },
];

interface List<T> {
  items: T[];
}

const LISTS: [QuotaKind, string][] = [
  ["Pod", "pods"],
  ["Service", "services"],
  ["PersistentVolumeClaim", "persistentvolumeclaims"],
  ["ConfigMap", "configmaps"],
  ["Secret", "secrets"],
];

async function ourUsage(): Promise<Usage> {
  const now = new Date();
  const usages: Usage[] = [];
  for (const [kind, collection] of LISTS) {
    const list = await kubeRequest<List<unknown>>(conn, { path: base(collection), timeoutMs: 10_000 });
    for (const item of list.items) usages.push(objectUsage(kind, item, now));
  }
  return sumUsage(usages);
}

interface ResourceQuota {
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

async function kubernetesUsage(): Promise<Record<string, bigint> | undefined> {
  const quota = await kubeRequest<ResourceQuota>(conn, {
    path: base("resourcequotas/all"),
    timeoutMs: 10_000,
  });
  const used = quota.status?.used;
  if (!used) return undefined;
  return Object.fromEntries(Object.entries(used).map(([name, text]) => [name, parseQuantity(text)]));
}

/** The resources both sides know, as plain numbers for readable failures. */
function comparable(usage: Partial<Record<string, bigint>>): Record<string, string> {
  return Object.fromEntries(
    Object.keys(HARD).map((resource) => [resource, (usage[resource] ?? 0n).toString()]),
  );
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-quota-usage-"));
  const binDir = await kubeBinaries(logger, { build: false });
  const printed = await run(path.join(binDir, "kube-apiserver"), ["--version"], { timeoutMs: 30_000 });
  const version = /v(\d+\.\d+\.\d+)/.exec(printed.stdout)?.[1] ?? "";
  provisioner = createLocalProvisioner({ stateDir, logger, versions: { [version]: binDir } });
  await provisioner.ensure({ tenant: TENANT, version, suspended: false });
  await eventually(async () => (await provisioner.observe(TENANT)).phase === "Running", 120_000);
  const access = await provisioner.access(TENANT);
  if (!access) throw new Error("no access to the tenant control plane");
  conn = connectCluster(`test-${TENANT}`, { inline: kubeconfigFromAccess(access, TENANT) });
}, 180_000);

afterAll(async () => {
  try {
    if (provisioner) for (const tenant of await provisioner.list()) await provisioner.destroy(tenant);
  } finally {
    await killProcessesMentioning(`${stateDir}/`);
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}, 90_000);

describe("tenant usage against a real ResourceQuota", { timeout: 120_000 }, () => {
  it("sums to exactly the controller-manager's status.used for every resource", async () => {
    await kubeRequest(conn, {
      method: "POST",
      path: "/api/v1/namespaces",
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } },
      timeoutMs: 10_000,
    });
    // The namespace's service account must exist before pods are admitted.
    await eventually(
      () => kubeRequest(conn, { path: base("serviceaccounts/default"), timeoutMs: 5_000 }),
      30_000,
    );
    await create("resourcequotas", {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "all" },
      spec: { hard: HARD },
    });
    // The quota admission refuses objects until the controller has computed a first status.
    await eventually(async () => (await kubernetesUsage()) !== undefined, 30_000);

    for (const pod of PODS) {
      await create("pods", { apiVersion: "v1", kind: "Pod", metadata: { name: pod.name }, spec: pod.spec });
    }
    await kubeRequest(conn, {
      method: "PATCH",
      path: base("pods/finished/status"),
      contentType: "application/merge-patch+json",
      body: { status: { phase: "Succeeded" } },
      timeoutMs: 10_000,
    });
    for (const [index, type] of ["ClusterIP", "NodePort", "ClusterIP"].entries()) {
      await create("services", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: `svc-${index}` },
        spec: { type, ports: [{ port: 80 + index }], selector: { app: "x" } },
      });
    }
    for (const claim of PVCS) {
      await create("persistentvolumeclaims", {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: claim.name },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: claim.storage } } },
      });
    }
    for (const index of [1, 2, 3]) {
      await create("configmaps", {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `config-${index}` },
        data: { index: String(index) },
      });
    }
    for (const index of [1, 2]) {
      await create("secrets", {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: `secret-${index}` },
        stringData: { index: String(index) },
      });
    }

    // A volume expanded beyond its request charges what was allocated (status), not the request.
    await kubeRequest(conn, {
      method: "PATCH",
      path: base("persistentvolumeclaims/gi/status"),
      contentType: "application/merge-patch+json",
      body: { status: { allocatedResources: { storage: "2Gi" } } },
      timeoutMs: 10_000,
    });

    const expectedPods = PODS.length - 1;
    let last: { ours: Record<string, string>; kubernetes: Record<string, string> } | undefined;
    const settled = await eventually(async () => {
      const kubernetes = await kubernetesUsage();
      if (!kubernetes) return undefined;
      last = { ours: comparable(await ourUsage()), kubernetes: comparable(kubernetes) };
      // Wait for the controller to have seen every object and status change.
      const sawEverything =
        kubernetes.pods === BigInt(expectedPods) * NANO_PER_UNIT &&
        kubernetes.persistentvolumeclaims === BigInt(PVCS.length) * NANO_PER_UNIT &&
        kubernetes.secrets === 2n * NANO_PER_UNIT &&
        kubernetes.services === 3n * NANO_PER_UNIT &&
        kubernetes.configmaps === 4n * NANO_PER_UNIT;
      return sawEverything && JSON.stringify(last.ours) === JSON.stringify(last.kubernetes)
        ? last
        : undefined;
    }, 60_000).catch((error: Error) => {
      throw new Error(`${error.message}; last seen: ${JSON.stringify(last)}`);
    });
    expect(settled.ours).toEqual(settled.kubernetes);

    // Guard against both sides being wrong the same way: the figures worked out by hand.
    const nano = (text: string) => parseQuantity(text).toString();
    expect(settled.kubernetes).toEqual({
      // plain 0.1 + two 0.25+0.001 + limits-only 0.333 + big-init max(0.1, 2) + sidecar
      // max(0.2+0.15, 0.15+1) + sidecar-dominates max(0.05+0.7, 0.7) + pod-level 1.2
      "requests.cpu": nano("5.784"),
      // 0.1 + 2.5 + 0.333 + max(0.2, 3) + max(0.4+0.3, 0.3+1) + max(0.05+0.9, 0.9) + 2
      "limits.cpu": nano("10.183"),
      "requests.memory": String(
        (129_000_000n +
          (1000n + 1024n) +
          100n * 2n ** 20n +
          2n * 2n ** 30n +
          (50_000_000n + 500n * 2n ** 20n) +
          (10n * 2n ** 20n + 700n * 2n ** 20n)) *
          NANO_PER_UNIT +
          // 1.2Gi is not a whole number of bytes: exact in nano-units.
          (12n * 2n ** 30n * NANO_PER_UNIT) / 10n,
      ),
      "limits.memory": String(
        ((3n * 2n ** 30n) / 2n +
          (2n ** 30n + (3n * 2n ** 30n) / 2n) +
          100n * 2n ** 20n +
          3n * 2n ** 30n +
          (100_000_000n + 2n ** 30n) +
          (10n * 2n ** 20n + 900n * 2n ** 20n) +
          2n * 2n ** 30n) *
          NANO_PER_UNIT,
      ),
      // max(1.5Gi, allocated 2Gi) + 129M + 1e3 + ⌈2.5⌉
      "requests.storage": String((2n * 2n ** 30n + 129_000_000n + 1000n + 3n) * NANO_PER_UNIT),
      pods: nano("7"),
      services: nano("3"),
      persistentvolumeclaims: nano("4"),
      // Three of ours and the kube-root-ca.crt every namespace gets.
      configmaps: nano("4"),
      secrets: nano("2"),
    });
    expect(quotaResourceNames).toContain("namespaces");
  });
});
