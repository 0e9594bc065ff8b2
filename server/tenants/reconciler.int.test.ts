/**
 * The tenant controller end to end on real parts: Tenant objects in the run's local super cluster,
 * the local provisioner starting real kube-apiserver/etcd/kube-controller-manager processes, and
 * the defaults checked by impersonating Ring0's groups in the tenant's own control plane.
 */
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObject, deleteObject, readObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { isNotFound, K8sError } from "@/server/k8s/errors";
import { listEventsFor } from "@/server/k8s/events";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { createLocalProvisioner } from "@/server/provisioners/local";
import type { ControlPlaneAccess, Provisioner } from "@/server/provisioners/types";
import { createConnectionCache } from "./connections";
import { createControlPlaneDirectory } from "./control-planes";
import { startTenantController } from "./controller";
import { protectedLabel } from "./defaults";
import { kubeGroupsFor, kubeUserName } from "./kube-identity";
import { tenantFinalizer } from "./reconciler";
import type { TenantStatus } from "./status";
import { type TenantResource, tenantApiVersion, tenantKind } from "./tenant-resources";

const logger = createLogger({ service: "tenant-it" }, "error");
const suffix = Date.now().toString(36).slice(-5);
const name = `rc-${suffix}`;
let superCluster: ClusterConnection;
let stateDir: string;
let provisioner: Provisioner;
let controller: ReturnType<typeof startTenantController>;
const deleted: string[] = [];

const tenantRef = (tenant: string) => ({
  apiVersion: tenantApiVersion,
  kind: tenantKind,
  metadata: { name: tenant },
});
const readTenant = (tenant: string) => readObject<TenantResource>(superCluster, tenantRef(tenant));
const condition = (tenant: TenantResource, type: string) =>
  (tenant.status as TenantStatus | undefined)?.conditions?.find((candidate) => candidate.type === type);

async function tenantConnection(tenant: string): Promise<ClusterConnection> {
  const access = await provisioner.access(tenant);
  if (!access) throw new Error(`no access to ${tenant}`);
  return createConnectionCache().connectionFor(tenant, access);
}

/** A request in the tenant's control plane as a Ring0 user would make it through the gateway. */
function asUser(
  access: ControlPlaneAccess,
  tenant: string,
  role: "tenant-admin" | "tenant-member" | "tenant-viewer",
) {
  return (method: string, apiPath: string, body?: unknown) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const url = new URL(access.server + apiPath);
      const headers: Record<string, string | string[]> = {
        accept: "application/json",
        "impersonate-user": kubeUserName(tenant, `${tenant}:${role}`),
        "impersonate-group": kubeGroupsFor(tenant, role),
      };
      if (body !== undefined) {
        headers["content-type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
      }
      const request = https.request(
        url,
        { method, headers, ca: access.ca, cert: access.cert, key: access.key, timeout: 15_000 },
        (response) => {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk) => {
            text += chunk;
          });
          response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
        },
      );
      request.on("error", reject);
      request.end(body === undefined ? undefined : JSON.stringify(body));
    });
}

beforeAll(async () => {
  superCluster = testSuperCluster();
  await installCrds(superCluster, logger);
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-tenant-it-"));
  provisioner = createLocalProvisioner({ stateDir, logger });
  controller = startTenantController(superCluster, {
    superCluster,
    provisioners: { local: provisioner },
    defaultProvisioner: "local",
    logger,
    pollMs: 300,
    onDeleted: async (tenant) => {
      deleted.push(tenant);
    },
  });
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  for (const tenant of [name, `${name}-hasty`]) {
    await deleteObject(superCluster, tenantRef(tenant)).catch(() => undefined);
    // Drop the finalizer so the super cluster is not left with a stuck object.
    await kubeRequest(superCluster, {
      method: "PATCH",
      path: `/apis/${tenantApiVersion}/tenants/${tenant}`,
      contentType: "application/merge-patch+json",
      body: { metadata: { finalizers: null } },
    }).catch(() => undefined);
    await provisioner?.destroy(tenant).catch(() => undefined);
  }
  fs.rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

describe("tenant controller with the local provisioner", () => {
  it("turns a minimal Tenant (spec: {}) into a Ready control plane with documented defaults", async () => {
    await createObject(superCluster, { ...tenantRef(name), spec: {} });
    const ready = await eventually(async () => {
      const tenant = await readTenant(name);
      return condition(tenant, "Ready")?.status === "True" ? tenant : undefined;
    }, 90_000);
    const status = ready.status as TenantStatus;
    expect(ready.metadata.finalizers).toContain(tenantFinalizer);
    expect(status).toMatchObject({
      phase: "Ready",
      provisioner: "local",
      observedGeneration: ready.metadata.generation,
    });
    expect(status.version).toMatch(/^v1\.36\./);
    expect(status.endpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(condition(ready, "ControlPlaneReady")).toMatchObject({ status: "True", reason: "Running" });
    expect(condition(ready, "DefaultsApplied")).toMatchObject({ status: "True", reason: "Applied" });
    expect(Date.parse(status.timings?.readyAt ?? "")).toBeGreaterThanOrEqual(
      Date.parse(status.timings?.createdAt ?? ""),
    );

    // The Ready event is recorded right after the status write that made the tenant Ready.
    await eventually(async () => {
      const reasons = (await listEventsFor(superCluster, { kind: tenantKind, name })).map(
        (event) => event.reason,
      );
      return reasons.includes("Provisioning") && reasons.includes("Ready") ? true : undefined;
    }, 15_000);

    // The directory sees it serving, with admin access the gateway can use.
    const directory = createControlPlaneDirectory({
      tenants: {
        find: async (tenant) => ({ resource: tenant === name ? await readTenant(name) : undefined }),
      },
      provisioners: { local: provisioner },
      defaultProvisioner: "local",
    });
    expect(await directory.lookup(name)).toMatchObject({
      state: "ready",
      access: { server: status.endpoint },
    });
    expect(await directory.lookup("nobody-here")).toEqual({ state: "absent" });
  }, 120_000);

  it("gives admins, members and viewers their rights and protects Ring0's objects", async () => {
    const conn = await tenantConnection(name);
    for (const namespace of ["default", "kube-system", "kube-public"]) {
      await kubeRequest(conn, { path: `/api/v1/namespaces/${namespace}` });
    }
    const access = await provisioner.access(name);
    if (!access) throw new Error("no access");
    const admin = asUser(access, name, "tenant-admin");
    const member = asUser(access, name, "tenant-member");
    const viewer = asUser(access, name, "tenant-viewer");

    expect((await admin("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } })).status).toBe(201);
    const configMap = { metadata: { name: "settings" }, data: { a: "1" } };
    expect((await member("POST", "/api/v1/namespaces/team-a/configmaps", configMap)).status).toBe(201);
    expect((await viewer("GET", "/api/v1/namespaces/team-a/configmaps/settings")).status).toBe(200);
    expect(
      (await viewer("POST", "/api/v1/namespaces/team-a/configmaps", { metadata: { name: "x" } })).status,
    ).toBe(403);
    // Members edit workloads but do not manage namespaces or RBAC.
    expect((await member("DELETE", "/api/v1/namespaces/team-a")).status).toBe(403);

    // Cluster-scoped things that configure the control plane or the shared nodes are out of reach.
    const node = { metadata: { name: "fake-node" } };
    expect((await admin("POST", "/api/v1/nodes", node)).status).toBe(403);

    // Ring0's RBAC objects: readable, not editable, not deletable, and the label cannot be forged.
    const binding = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/ring0:tenant-admins";
    expect((await admin("GET", binding)).status).toBe(200);
    const deleting = await admin("DELETE", binding);
    expect(deleting.status).toBe(403);
    expect(deleting.text).toContain("managed by Ring0");
    const patching = await admin("PATCH", binding, { metadata: { labels: { [protectedLabel]: null } } });
    expect(patching.status).toBe(403);
    const forged = await admin("POST", "/api/v1/namespaces/team-a/configmaps", {
      metadata: { name: "forged", labels: { [protectedLabel]: "true" } },
    });
    expect(forged.status).toBe(403);
    // Escalation: an admin cannot bind cluster-admin to themselves.
    const escalate = await admin("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      metadata: { name: "mine" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: kubeUserName(name, "x") }],
    });
    expect(escalate.status).toBe(403);

    // Drift is repaired on the next reconcile: Ring0 (system:masters) may change its objects.
    await deleteObject(conn, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "ring0:tenant-members" },
    });
    controller.controller.enqueue(name);
    await eventually(async () => {
      try {
        await kubeRequest(conn, {
          path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/ring0:tenant-members",
        });
        return true;
      } catch (error) {
        if (error instanceof K8sError && isNotFound(error)) return undefined;
        throw error;
      }
    }, 30_000);
  }, 90_000);

  it("lets tenant admins write admission policies of their own, which never reach Ring0's requests", async () => {
    const conn = await tenantConnection(name);
    const access = await provisioner.access(name);
    if (!access) throw new Error("no access");
    const admin = asUser(access, name, "tenant-admin");
    const policies = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
    const mutating = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies";

    // Ring0's policies come from files: no API object to delete, and their names cannot be taken.
    const listed = (await admin("GET", policies)).text;
    expect(listed).not.toContain("ring0-protect-managed");
    expect((await admin("DELETE", `${policies}/ring0-protect-managed.static.k8s.io`)).status).toBe(404);
    const squatting = await admin("POST", policies, {
      metadata: { name: "ring0-protect-managed.static.k8s.io" },
      spec: { validations: [{ expression: "true" }] },
    });
    expect(squatting.status).toBe(422);

    // A policy of the tenant's own: Ring0's condition is added, and stays when the admin removes it.
    const blue =
      "!has(object.metadata.labels) || !('color' in object.metadata.labels) || object.metadata.labels.color != 'blue'";
    const created = await admin("POST", policies, {
      metadata: { name: "no-blue" },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [
            { apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"], operations: ["CREATE"] },
          ],
        },
        validations: [{ expression: blue, message: "no blue config maps here" }],
      },
    });
    expect(created.status).toBe(201);
    expect(created.text).toContain("ring0-not-ring0");
    const stripped = await admin("PATCH", `${policies}/no-blue`, { spec: { matchConditions: [] } });
    expect(stripped.status).toBe(200);
    expect(stripped.text).toContain("ring0-not-ring0");
    const binding = await admin("POST", `${policies.replace("policies", "policybindings")}`, {
      metadata: { name: "no-blue" },
      spec: { policyName: "no-blue", validationActions: ["Deny"] },
    });
    expect(binding.status).toBe(201);
    const blueMap = (mapName: string) => ({ metadata: { name: mapName, labels: { color: "blue" } } });
    const refused = await eventually(async () => {
      const attempt = await admin(
        "POST",
        "/api/v1/namespaces/default/configmaps?dryRun=All",
        blueMap("mine"),
      );
      return attempt.status === 422 ? attempt.text : undefined;
    }, 30_000);
    expect(refused).toContain("no blue config maps here");
    // Ring0 (the control plane's system:masters identity) is not subject to it.
    await createObject(conn, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "ring0s", namespace: "default", labels: { color: "blue" } },
    });

    // A mutating policy of the tenant's: it changes the admin's writes, never Ring0's.
    const tamper = await admin("POST", mutating, {
      metadata: { name: "tamper" },
      spec: {
        failurePolicy: "Fail",
        reinvocationPolicy: "Never",
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [""],
              apiVersions: ["v1"],
              resources: ["configmaps"],
              operations: ["CREATE", "UPDATE"],
            },
          ],
        },
        mutations: [
          {
            patchType: "ApplyConfiguration",
            applyConfiguration: {
              expression: 'Object{metadata: Object.metadata{labels: {"tampered": "yes"}}}',
            },
          },
        ],
      },
    });
    expect(tamper.status).toBe(201);
    expect(tamper.text).toContain("ring0-not-ring0");
    expect(
      (
        await admin("POST", mutating.replace("policies", "policybindings"), {
          metadata: { name: "tamper" },
          spec: { policyName: "tamper" },
        })
      ).status,
    ).toBe(201);
    await eventually(async () => {
      const attempt = await admin("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", {
        metadata: { name: "admins" },
      });
      return attempt.status === 201 && attempt.text.includes('"tampered":"yes"') ? true : undefined;
    }, 30_000);
    const ring0s = await serverSideApply(conn, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "ring0-applied", namespace: "default" },
      data: { k: "v" },
    });
    expect(
      (ring0s as { metadata: { labels?: Record<string, string> } }).metadata.labels?.tampered,
    ).toBeUndefined();

    // A policy that could refuse Ring0's requests before any condition is weighed is refused: a
    // parameter that may be missing under failurePolicy Fail, or conditions enough to run out the
    // budget they share.
    const rules = {
      resourceRules: [
        { apiGroups: [""], apiVersions: ["v1"], resources: ["namespaces"], operations: ["UPDATE"] },
      ],
    };
    const withParams = await admin("POST", policies, {
      metadata: { name: "params" },
      spec: {
        failurePolicy: "Fail",
        paramKind: { apiVersion: "v1", kind: "ConfigMap" },
        matchConstraints: rules,
        validations: [{ expression: "true" }],
      },
    });
    expect(withParams.status).toBe(403);
    expect(withParams.text).toContain("failurePolicy Ignore");
    const crowded = await admin("POST", policies, {
      metadata: { name: "crowded" },
      spec: {
        matchConstraints: rules,
        matchConditions: ["a", "b", "c"].map((conditionName) => ({
          name: conditionName,
          expression: "true",
        })),
        validations: [{ expression: "true" }],
      },
    });
    expect(crowded.status).toBe(403);
    expect(crowded.text).toContain("at most 2 of its own");
    const ignoring = await admin("POST", policies, {
      metadata: { name: "params" },
      spec: {
        failurePolicy: "Ignore",
        paramKind: { apiVersion: "v1", kind: "ConfigMap" },
        matchConstraints: rules,
        validations: [{ expression: "true" }],
      },
    });
    expect(ignoring.status).toBe(201);
    expect((await admin("DELETE", `${policies}/params`)).status).toBe(200);

    // A policy Ring0 created through the API before its policies moved into files is removed.
    await createObject(conn, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: "ring0-protect-managed", labels: { [protectedLabel]: "true" } },
      spec: {
        matchConstraints: {
          resourceRules: [
            { apiGroups: [""], apiVersions: ["v1"], resources: ["secrets"], operations: ["CREATE"] },
          ],
        },
        validations: [{ expression: "true" }],
      },
    });
    controller.controller.enqueue(name);
    await eventually(async () => {
      const left = await admin("GET", `${policies}/ring0-protect-managed`);
      return left.status === 404 ? true : undefined;
    }, 30_000);

    // The admin removes their own policies as a cluster admin would.
    for (const path of [`${policies}/no-blue`, `${mutating}/tamper`]) {
      expect((await admin("DELETE", path)).status).toBe(200);
      expect((await admin("DELETE", path.replace("policies/", "policybindings/"))).status).toBe(200);
    }
  }, 90_000);

  it("lets tenant admins configure API priority and fairness, with Ring0's requests kept exempt", async () => {
    const conn = await tenantConnection(name);
    const access = await provisioner.access(name);
    if (!access) throw new Error("no access");
    const admin = asUser(access, name, "tenant-admin");
    const flowSchemas = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
    const levels = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";
    const level = await admin("POST", levels, {
      metadata: { name: "trickle" },
      spec: { type: "Limited", limited: { nominalConcurrencyShares: 1, limitResponse: { type: "Reject" } } },
    });
    expect(level.status).toBe(201);
    // Everything, Ring0's system:masters included, to a level that rejects: never before "exempt"
    // (Kubernetes keeps precedence 1 to it; Ring0's policy too).
    const everyone = (precedence: number) => ({
      metadata: { name: `everyone-${precedence}` },
      spec: {
        priorityLevelConfiguration: { name: "trickle" },
        matchingPrecedence: precedence,
        rules: [
          {
            subjects: [{ kind: "Group", group: { name: "system:masters" } }],
            resourceRules: [
              { verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"] },
            ],
          },
        ],
      },
    });
    const first = await admin("POST", flowSchemas, everyone(1));
    expect(first.status).toBe(422);
    expect(first.text).toContain("only the schema named 'exempt' may have matchingPrecedence 1");
    // Nor can "exempt" itself be changed or removed, by name or with a whole collection (admitted
    // item by item, each without its name in the request).
    expect((await admin("DELETE", `${flowSchemas}/exempt`)).status).toBe(403);
    expect((await admin("PATCH", `${levels}/exempt`, { metadata: { labels: { x: "y" } } })).status).toBe(403);
    for (const collection of [flowSchemas, levels]) {
      const sweeping = await admin("DELETE", collection);
      expect(sweeping.status, collection).toBe(403);
      expect(sweeping.text).toContain('\\"exempt\\": the exempt FlowSchema');
      expect((await admin("GET", `${collection}/exempt`)).status).toBe(200);
    }
    // And Ring0's own objects stay when a tenant admin sweeps their kind.
    const sweptBindings = await admin("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings");
    expect(sweptBindings.status).toBe(403);
    expect(sweptBindings.text).toContain("is managed by Ring0");
    expect(
      (await admin("GET", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/ring0:tenant-admins"))
        .status,
    ).toBe(200);
    // Nor can the tenant's own requests go around priority and fairness through "exempt".
    const toExempt = everyone(3);
    toExempt.spec.priorityLevelConfiguration.name = "exempt";
    expect((await admin("POST", flowSchemas, toExempt)).status).toBe(403);
    // After exempt, the same FlowSchema is the tenant's to have: Ring0's requests still pass.
    expect((await admin("POST", flowSchemas, everyone(2))).status).toBe(201);
    await serverSideApply(conn, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "after-flowschema", namespace: "default" },
      data: { k: "v" },
    });
    expect((await admin("DELETE", `${flowSchemas}/everyone-2`)).status).toBe(200);
    expect((await admin("DELETE", `${levels}/trickle`)).status).toBe(200);
  }, 60_000);

  it("suspends (stopped, data kept) and resumes", async () => {
    const conn = await tenantConnection(name);
    await serverSideApply(conn, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "keep", namespace: "default" },
      data: { k: "v" },
    });
    await kubeRequest(superCluster, {
      method: "PATCH",
      path: `/apis/${tenantApiVersion}/tenants/${name}`,
      contentType: "application/merge-patch+json",
      body: { spec: { suspend: true } },
    });
    await eventually(
      async () => ((await readTenant(name)).status?.phase === "Suspended" ? true : undefined),
      60_000,
    );
    expect((await provisioner.observe(name)).phase).toBe("Stopped");
    const suspended = await readTenant(name);
    expect(condition(suspended, "Ready")).toMatchObject({ status: "False", reason: "Suspended" });

    await kubeRequest(superCluster, {
      method: "PATCH",
      path: `/apis/${tenantApiVersion}/tenants/${name}`,
      contentType: "application/merge-patch+json",
      body: { spec: { suspend: false } },
    });
    await eventually(
      async () => (condition(await readTenant(name), "Ready")?.status === "True" ? true : undefined),
      90_000,
    );
    const resumed = await tenantConnection(name);
    const kept = await readObject(resumed, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "keep", namespace: "default" },
    });
    expect(kept).toMatchObject({ data: { k: "v" } });
  }, 180_000);

  it("refuses an unknown version with a condition, and keeps serving the current one", async () => {
    await kubeRequest(superCluster, {
      method: "PATCH",
      path: `/apis/${tenantApiVersion}/tenants/${name}`,
      contentType: "application/merge-patch+json",
      body: { spec: { controlPlane: { version: "1.99" } } },
    });
    const refused = await eventually(async () => {
      const tenant = await readTenant(name);
      return condition(tenant, "Ready")?.reason === "UnsupportedVersion" ? tenant : undefined;
    }, 30_000);
    expect(condition(refused, "Ready")?.message).toContain("Kubernetes 1.99 is not available");
    expect(condition(refused, "ControlPlaneReady")?.status).toBe("True");
    expect((await provisioner.observe(name)).phase).toBe("Running");

    await kubeRequest(superCluster, {
      method: "PATCH",
      path: `/apis/${tenantApiVersion}/tenants/${name}`,
      contentType: "application/merge-patch+json",
      body: { spec: { controlPlane: { version: "1.36" } } },
    });
    await eventually(
      async () => (condition(await readTenant(name), "Ready")?.status === "True" ? true : undefined),
      60_000,
    );
  }, 120_000);

  it("deleting a tenant while it provisions converges: no control plane, files or Tenant left", async () => {
    const hasty = `${name}-hasty`;
    await createObject(superCluster, { ...tenantRef(hasty), spec: { displayName: "Gone soon" } });
    // Wait until provisioning has begun (the finalizer is on), then delete at once.
    await eventually(
      async () =>
        (await readTenant(hasty)).metadata.finalizers?.includes(tenantFinalizer) ? true : undefined,
      30_000,
    );
    await deleteObject(superCluster, tenantRef(hasty));
    await eventually(async () => {
      try {
        await readTenant(hasty);
        return undefined;
      } catch (error) {
        return isNotFound(error) ? true : undefined;
      }
    }, 90_000);
    expect(deleted).toContain(hasty);
    await eventually(
      async () => ((await provisioner.observe(hasty)).phase === "Absent" ? true : undefined),
      30_000,
    );
    expect(fs.existsSync(path.join(stateDir, "tenants", hasty))).toBe(false);
  }, 150_000);

  it("deletes the control plane with the Tenant, leaving nothing behind", async () => {
    const tenantDir = path.join(stateDir, "tenants", name);
    expect(fs.existsSync(tenantDir)).toBe(true);
    await deleteObject(superCluster, tenantRef(name));
    await eventually(async () => {
      try {
        await readTenant(name);
        return undefined;
      } catch (error) {
        return isNotFound(error) ? true : undefined;
      }
    }, 60_000);
    expect(deleted).toContain(name);
    expect((await provisioner.observe(name)).phase).toBe("Absent");
    expect(await provisioner.list()).not.toContain(name);
    expect(fs.existsSync(tenantDir)).toBe(false);
  }, 90_000);
});
