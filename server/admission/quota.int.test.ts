/**
 * Tenant quota admission (issue 7) against the real thing: a tenant control plane from the local
 * provisioner (whose apiserver presents its client certificate to Ring0's webhooks), a Tenant object
 * with spec.quota on the run's super cluster, Ring0's webhook server, and the registration the
 * tenant reconciler applies. Every create here goes through the tenant's kube-apiserver. And Ring0's
 * authorization webhook on the same server, which the control plane asks about what RBAC refused.
 */

import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killProcessesMentioning } from "@/server/cluster/process";
import { formatResourceQuantity } from "@/server/core/quota-resources";
import { createPrismaClient, disconnectDb, type PrismaClient, setDatabaseUrl } from "@/server/db/client";
import { createObject, deleteObject, type KubeObject, readObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { createLocalProvisioner } from "@/server/provisioners/local";
import type { Provisioner } from "@/server/provisioners/types";
import { startQuotaSampler } from "@/server/quotas/sampler";
import { readTenantUsage } from "@/server/quotas/tenant-usage";
import { informerTenantSource } from "@/server/runtime/tenants";
import {
  provisionerDirectory,
  readOrUndefined,
  ref,
  removeTenant,
  startTenants,
} from "@/server/syncer/test-world";
import { applyTenantDefaults } from "@/server/tenants/defaults";
import { kubeUserName, roleGroup } from "@/server/tenants/kube-identity";
import { type TenantResource, tenantApiVersion } from "@/server/tenants/tenant-resources";
import { ensureVnAgentPki } from "@/server/vn-agent/pki";
import { testDatabaseUrl } from "@/test/integration/database";
import { gadgetCrd, gadget as gadgetOf, impersonating } from "@/test/integration/extensions";
import { QUOTA_WEBHOOK_CONFIGURATION, syncQuotaWebhook } from "./registration";
import { startAdmission } from "./start";

const logger = createLogger({ service: "quota-admission-it" }, "error");
const tenant = `qa-${Date.now().toString(36).slice(-5)}`;

let stateDir = "";
let superCluster: ClusterConnection;
let provisioner: Provisioner | undefined;
let conn: ClusterConnection;
let db: PrismaClient;
let admission: Awaited<ReturnType<typeof startAdmission>> | undefined;
let tenants: ReturnType<typeof informerTenantSource> | undefined;
/** The tenant's default namespace share as the webhook reads it (the database's in Ring0). */
let defaultShare: Record<string, string> | undefined;

const pod = (name: string, namespace: string, cpu: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace },
  spec: {
    containers: [{ name: "main", image: "nginx", resources: { requests: { cpu }, limits: { cpu } } }],
    terminationGracePeriodSeconds: 0,
  },
});

/** Sets Tenant.spec.quota and brings the webhook registration in line, as the reconciler does. */
async function setQuota(hard: Record<string, string> | null): Promise<void> {
  await kubeRequest(superCluster, {
    method: "PATCH",
    path: `/apis/${tenantApiVersion}/tenants/${tenant}`,
    contentType: "application/merge-patch+json",
    body: { spec: { quota: hard ? { hard } : null } },
  });
  // The informer Ring0 reads quotas from sees the change.
  await eventually(async () => {
    const found = await tenants?.find(tenant);
    const current = found && "resource" in found ? found.resource?.spec.quota?.hard : undefined;
    const sorted = (value: Record<string, string> | null | undefined) =>
      JSON.stringify(value ? Object.entries(value).sort() : null);
    return sorted(current) === sorted(hard) ? true : undefined;
  }, 15_000);
  expect(await syncQuotaWebhook(conn, hard ? { hard } : undefined)).toBe(hard ? "applied" : "removed");
}

/** The error message of a create the API server refused, or "admitted". */
async function tryCreate(object: KubeObject): Promise<string> {
  try {
    await createObject(conn, object);
    return "admitted";
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Creates `object` once the webhook's ledger has caught up with the changes just made: the ledger
 * learns of objects from its watches, and until then it is conservative (it may refuse what would
 * fit, never admit what would not). A refusal creates nothing, so trying again is safe.
 */
async function admittedOnceCaughtUp(object: KubeObject): Promise<string> {
  let last = "";
  try {
    await eventually(async () => {
      last = await tryCreate(object);
      return last === "admitted" ? true : undefined;
    }, 20_000);
  } catch {
    // The last answer says why.
  }
  return last;
}

/** A refusal once the ledger has caught up: the message that names `expected`, or the last one. */
async function refusalOnceCaughtUp(object: KubeObject, expected: string): Promise<string> {
  let last = "";
  try {
    await eventually(async () => {
      last = await tryCreate(object);
      return last.includes(expected) || last === "admitted" ? true : undefined;
    }, 20_000);
  } catch {
    // The last answer says why.
  }
  return last;
}

/** Waits until the webhook is in force (a registration takes a moment to reach the API server's informers). */
async function webhookInForce(namespace: string): Promise<void> {
  await eventually(async () => {
    try {
      await createObject(conn, pod("probe-too-big", namespace, "1000"));
      await deleteObject(conn, ref("Pod", "probe-too-big", namespace));
      return undefined;
    } catch (error) {
      return String(error).includes("exceeded tenant quota") ? true : undefined;
    }
  }, 30_000);
}

beforeAll(async () => {
  superCluster = testSuperCluster();
  await installCrds(superCluster, logger);
  const url = await testDatabaseUrl();
  db = createPrismaClient(url);
  setDatabaseUrl(url);
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-quota-it-"));
  provisioner = createLocalProvisioner({ stateDir, logger, vnAgentStateDir: stateDir });
  const current = provisioner;
  // Ring0's webhook server first, as at run time: the control plane starts with its authorization webhook.
  tenants = informerTenantSource(superCluster);
  admission = await startAdmission({
    stateDir,
    tenants,
    directory: provisionerDirectory(new Set([tenant]), () => current),
    logger,
    namespaceDefaultShare: async (name) => (name === tenant ? defaultShare : undefined),
  });
  [conn] = (await startTenants(superCluster, current, [tenant])) as [ClusterConnection];
  // Defaults once, never again in this file: RBAC knows no CRD group of the tenant's below.
  await eventually(
    async () => ((await applyTenantDefaults(conn, { tenant, admins: [] })) === undefined ? true : undefined),
    60_000,
  );
  for (const namespace of ["team-a", "team-b"]) {
    await serverSideApply(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  }
}, 240_000);

afterAll(async () => {
  await admission?.stop();
  tenants?.release();
  await removeTenant(superCluster, provisioner, tenant);
  await killProcessesMentioning(`${stateDir}/`);
  fs.rmSync(stateDir, { recursive: true, force: true });
  await db?.$disconnect();
  await disconnectDb();
}, 120_000);

describe("tenant quota admission", () => {
  it("refuses a pod that would take the tenant over its CPU quota across namespaces, with the numbers", async () => {
    await setQuota({ "requests.cpu": "2", pods: "20" });
    await webhookInForce("team-a");
    expect(await tryCreate(pod("a1", "team-a", "1"))).toBe("admitted");
    expect(await tryCreate(pod("b1", "team-b", "800m"))).toBe("admitted");
    const refused = await tryCreate(pod("b2", "team-b", "500m"));
    expect(refused).toContain('admission webhook "quota.ring0.dev" denied the request');
    expect(refused).toContain(
      `exceeded tenant quota of "${tenant}": requests.cpu: requested 500m, used 1800m, limited 2`,
    );
    // Room for exactly 200m is left.
    expect(await tryCreate(pod("b3", "team-b", "200m"))).toBe("admitted");
  });

  it("lets deleted pods' room be used again", async () => {
    await deleteObject(conn, ref("Pod", "b3", "team-b"), { gracePeriodSeconds: 0 });
    await eventually(
      async () => ((await tryCreate(pod("b4", "team-b", "200m"))) === "admitted" ? true : undefined),
      15_000,
    );
  });

  it("never oversubscribes when concurrent creates race for the last units", async () => {
    await deleteObject(conn, ref("Pod", "b4", "team-b"), { gracePeriodSeconds: 0 });
    await deleteObject(conn, ref("Pod", "b1", "team-b"), { gracePeriodSeconds: 0 });
    // 1 CPU is in use (a1); 1 CPU is left: 20 racers of 100m, exactly 10 may get in.
    await eventually(async () => {
      const pods = await kubeRequest<{ items: unknown[] }>(conn, { path: "/api/v1/namespaces/team-b/pods" });
      return pods.items.length === 0 ? true : undefined;
    }, 15_000);
    // The ledger follows deletions through its watch: wait until it shows them.
    await eventually(async () => {
      const used = await admission?.admission.usage(tenant);
      return used?.["requests.cpu"] === 1_000_000_000n ? true : undefined;
    }, 15_000);
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        tryCreate(pod(`race-${index}`, index % 2 ? "team-a" : "team-b", "100m")),
      ),
    );
    const admitted = outcomes.filter((outcome) => outcome === "admitted").length;
    expect(admitted).toBe(10);
    for (const outcome of outcomes.filter((candidate) => candidate !== "admitted")) {
      expect(outcome).toContain("requests.cpu: requested 100m");
    }
    const all = await kubeRequest<{
      items: Array<{ spec: { containers: Array<{ resources: { requests: { cpu: string } } }> } }>;
    }>(conn, { path: "/api/v1/pods" });
    expect(all.items).toHaveLength(11);
  });

  it("does not count a dry run against the quota", async () => {
    await setQuota({ "requests.cpu": "2100m", pods: "20" });
    await eventually(async () => {
      try {
        await kubeRequest(conn, {
          method: "POST",
          path: "/api/v1/namespaces/team-a/pods",
          query: { dryRun: "All" },
          body: pod("dry", "team-a", "100m"),
        });
        return true;
      } catch {
        return undefined;
      }
    }, 15_000);
    expect(await tryCreate(pod("after-dry", "team-a", "100m"))).toBe("admitted");
  });

  it("refuses namespace quotas that add up to more than the tenant's quota, naming each share", async () => {
    const quota = (namespace: string, cpu: string): KubeObject => ({
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "share", namespace },
      spec: { hard: { "requests.cpu": cpu } },
    });
    expect(await admittedOnceCaughtUp(quota("team-a", "1500m"))).toBe("admitted");
    expect(await admittedOnceCaughtUp(quota("team-b", "600m"))).toBe("admitted");
    // A second, larger quota in a namespace allocates nothing more: the tightest one is its share.
    expect(
      await admittedOnceCaughtUp({
        ...quota("team-b", "1"),
        metadata: { name: "share-2", namespace: "team-b" },
      }),
    ).toBe("admitted");
    let refused = "";
    try {
      await serverSideApply(conn, quota("team-b", "1"), { force: true });
    } catch (error) {
      refused = String(error);
    }
    expect(refused).toContain(
      "namespace quotas exceed the tenant quota: requests.cpu: the namespaces' quotas would add up to 2500m (team-a 1500m, team-b 1) but the tenant's quota is 2100m",
    );
    // Lowering a share is always possible.
    await serverSideApply(conn, quota("team-b", "100m"), { force: true });
  });

  it("refuses a namespace whose default share would not fit in what the namespaces' quotas leave", async () => {
    const namespace = (name: string): KubeObject => ({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name },
    });
    // The shares now: team-a 1500m, team-b 100m (its tightest quota) of 2100m; 500m is left.
    defaultShare = { "requests.cpu": "600m", pods: "5" };
    try {
      const expected =
        "the default share for new namespaces (requests.cpu 600m) does not fit: the namespaces' quotas already give 1600m of the tenant's 2100m (team-a 1500m, team-b 100m); lower the default share or a namespace's quota";
      const refused = await refusalOnceCaughtUp(namespace("too-big-share"), expected);
      expect(refused).toContain('admission webhook "quota.ring0.dev" denied the request');
      expect(refused).toContain(expected);
      defaultShare = { "requests.cpu": "500m", pods: "5" };
      expect(await admittedOnceCaughtUp(namespace("fitting-share"))).toBe("admitted");
    } finally {
      defaultShare = undefined;
    }
    // Without a default share a namespace is never refused for it (namespaces are not limited here).
    expect(await tryCreate(namespace("no-share"))).toBe("admitted");
  });

  it("records refusals for the portal, counting repeats instead of storing them again", async () => {
    const message = await tryCreate(pod("huge", "team-a", "64"));
    expect(message).toContain("exceeded tenant quota");
    await tryCreate(pod("huge", "team-a", "64"));
    const rows = await eventually(async () => {
      const found = await db.quotaRefusal.findMany({ where: { tenant, name: "huge" } });
      return found.length === 1 && found[0]?.count === 2 ? found : undefined;
    }, 10_000);
    expect(rows[0]).toMatchObject({ kind: "Pod", namespace: "team-a", operation: "CREATE" });
    expect(rows[0]?.exceeded).toEqual([
      expect.objectContaining({ resource: "requests.cpu", requested: "64", limit: "2100m" }),
    ]);
  });

  it("counts the same as a fresh read of the control plane, and samples it into the history", async () => {
    const fresh = await readTenantUsage(conn);
    const ledger = await admission?.admission.usage(tenant);
    for (const resource of ["requests.cpu", "limits.cpu", "pods"] as const) {
      expect(ledger?.[resource]).toBe(fresh.total[resource]);
    }
    await db.quotaSample.create({
      data: { tenant, at: new Date(Date.now() - 40 * 86_400_000), used: {}, hard: {} },
    });
    const resource = (await readObject(superCluster, {
      apiVersion: tenantApiVersion,
      kind: "Tenant",
      metadata: { name: tenant },
    })) as TenantResource;
    const sampler = startQuotaSampler({
      tenants: () => [resource],
      intervalMs: 3_600_000,
      retentionMs: 30 * 86_400_000,
      logger,
      usageOf: () => readTenantUsage(conn),
    });
    try {
      expect(await sampler.sampleNow()).toBe(1);
    } finally {
      sampler.stop();
    }
    const samples = await db.quotaSample.findMany({ where: { tenant } });
    expect(samples).toHaveLength(1);
    expect(samples[0]?.hard).toEqual({ "requests.cpu": "2100m", pods: "20" });
    const used = (samples[0]?.used ?? {}) as Record<string, string>;
    expect(used["requests.cpu"]).toBe(
      formatResourceQuantity("requests.cpu", fresh.total["requests.cpu"] ?? 0n),
    );
  });

  it("removes the webhook when the quota goes, so the tenant no longer depends on Ring0 for writes", async () => {
    await setQuota(null);
    expect(
      await readOrUndefined(conn, {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: QUOTA_WEBHOOK_CONFIGURATION },
      }),
    ).toBeUndefined();
    // A new namespace without a ResourceQuota of its own: only the (gone) tenant quota could refuse.
    await serverSideApply(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: "free" } });
    await eventually(
      async () => ((await tryCreate(pod("free", "free", "64"))) === "admitted" ? true : undefined),
      15_000,
    );
  });

  it("accepts only a tenant apiserver's client certificate", async () => {
    const pki = await ensureVnAgentPki(stateDir);
    const post = (options: https.RequestOptions) =>
      new Promise<string>((resolve) => {
        const request = https.request(
          {
            host: "127.0.0.1",
            port: admission?.port,
            path: "/validate/quota",
            method: "POST",
            ca: pki.servingCa.cert,
            ...options,
          },
          (response) => {
            response.resume();
            resolve(String(response.statusCode));
          },
        );
        request.on("error", (error) => resolve(`error: ${error.message}`));
        request.end("{}");
      });
    // No client certificate: the TLS handshake is refused.
    expect(await post({})).toMatch(/^error/);
    // The serving certificate is not a client certificate of the tenant CA.
    expect(await post({ cert: pki.serving.cert, key: pki.serving.key })).toMatch(/^error/);
    // A tenant apiserver's certificate gets an answer (400: the body is not an AdmissionReview).
    const client = await pki.issueTenantKubeletClient(tenant);
    expect(await post({ cert: client.cert, key: client.key })).toBe("400");
  });
});

describe("Ring0's authorization webhook", () => {
  const as = impersonating;
  const admin = as(kubeUserName(tenant, "mallory"), roleGroup(tenant, "admin"));
  const member = as(kubeUserName(tenant, "bob"), roleGroup(tenant, "member"));

  it("gives tenant admins a new CRD's group the moment it exists, never members, never reserved groups", async () => {
    const group = `fresh-${Date.now().toString(36)}.example.com`;
    const created = await kubeRequestText(conn, {
      method: "POST",
      path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      headers: admin,
      body: gadgetCrd(group),
    });
    expect(created.status).toBe(201);
    const gadgets = `/apis/${group}/v1/namespaces/team-a/gadgets`;
    const gadget = (name: string) => gadgetOf(group, name);
    // Served a moment after it is created; no reconcile runs here, so only the webhook can allow this.
    const first = await eventually(async () => {
      const attempt = await kubeRequestText(conn, {
        method: "POST",
        path: gadgets,
        headers: admin,
        body: gadget("g1"),
      });
      return attempt.status === 404 ? undefined : attempt;
    }, 30_000);
    expect(first.status).toBe(201);
    expect((await kubeRequestText(conn, { path: `${gadgets}/g1`, headers: admin })).status).toBe(200);
    const byMember = await kubeRequestText(conn, {
      method: "POST",
      path: gadgets,
      headers: member,
      body: gadget("g2"),
    });
    expect(byMember.status).toBe(403);
    // A reserved group stays RBAC's alone: admins get no certificate signing from Ring0.
    const signing = await kubeRequestText(conn, {
      method: "POST",
      path: "/apis/certificates.k8s.io/v1/certificatesigningrequests",
      headers: admin,
      body: {
        apiVersion: "certificates.k8s.io/v1",
        kind: "CertificateSigningRequest",
        metadata: { name: "mine" },
        spec: { request: "", signerName: "kubernetes.io/kube-apiserver-client", usages: ["client auth"] },
      },
    });
    expect(signing.status).toBe(403);
    // The Tenant's spec.admins are admins by name, without the group.
    const carol = as(kubeUserName(tenant, "carol"));
    expect((await kubeRequestText(conn, { path: gadgets, headers: carol })).status).toBe(403);
    await kubeRequest(superCluster, {
      method: "PATCH",
      path: `/apis/${tenantApiVersion}/tenants/${tenant}`,
      contentType: "application/merge-patch+json",
      body: { spec: { admins: ["carol"] } },
    });
    // The informer sees it, and the API server's 10 s cache of the refusal runs out.
    await eventually(async () => {
      const read = await kubeRequestText(conn, { path: gadgets, headers: carol });
      return read.status === 200 ? true : undefined;
    }, 30_000);
  }, 90_000);

  it("answers only tenant API servers, with allowed or no opinion, never a denial", async () => {
    const pki = await ensureVnAgentPki(stateDir);
    const client = await pki.issueTenantKubeletClient(tenant);
    const review = (spec: object) =>
      new Promise<string>((resolve, reject) => {
        const request = https.request(
          {
            host: "127.0.0.1",
            port: admission?.port,
            path: "/authorize",
            method: "POST",
            ca: pki.servingCa.cert,
            cert: client.cert,
            key: client.key,
            headers: { "content-type": "application/json" },
          },
          (response) => {
            let text = "";
            response.setEncoding("utf8");
            response.on("data", (chunk) => {
              text += chunk;
            });
            response.on("end", () => resolve(`${response.statusCode} ${text}`));
          },
        );
        request.on("error", reject);
        request.end(
          JSON.stringify({ apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec }),
        );
      });
    const attributes = { group: "widgets.example.com", resource: "widgets", verb: "create", namespace: "x" };
    expect(
      await review({ user: "x", groups: [roleGroup(tenant, "admin")], resourceAttributes: attributes }),
    ).toContain('"allowed":true');
    // Another tenant's admins are nobody here.
    const other = await review({
      user: "x",
      groups: [roleGroup("globex", "admin")],
      resourceAttributes: attributes,
    });
    expect(other).toContain('"allowed":false');
    expect(other).not.toContain("denied");
    expect(
      await review({
        user: "x",
        groups: [roleGroup(tenant, "admin")],
        resourceAttributes: { ...attributes, verb: "escalate" },
      }),
    ).toContain('"allowed":false');
    expect((await review({ groups: "not-a-list" })).startsWith("400")).toBe(true);
  });
});
