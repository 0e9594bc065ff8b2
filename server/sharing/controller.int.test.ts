/**
 * The SharingPolicy controller end to end on real parts: grants in the run's local super cluster,
 * the owner tenant's own kube-apiserver (local provisioner) with Ring0's tenant defaults and their
 * protection policy, and what the grant's RBAC allows checked by impersonating the grantee identity
 * the kube gateway uses — and a tenant admin of the owner — on the control plane's admin connection.
 */
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObject, deleteObject, type KubeObject, readObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { isNotFound } from "@/server/k8s/errors";
import { listEventsFor } from "@/server/k8s/events";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { createLocalProvisioner } from "@/server/provisioners/local";
import type { ControlPlaneAccess, Provisioner } from "@/server/provisioners/types";
import {
  provisionerDirectory,
  readOrUndefined,
  ref,
  removeTenant,
  startTenants,
} from "@/server/syncer/test-world";
import { applyTenantDefaults, managedLabels } from "@/server/tenants/defaults";
import { granteeIdentity, kubeUserName, roleGroup, tenantGroup } from "@/server/tenants/kube-identity";
import { automaticApprover } from "./approval";
import { startSharingController } from "./controller";
import { specHash } from "./grants";
import { defaultSharingPolicy } from "./policy";
import { grantRbacName } from "./rbac";
import { orphanSweepKey, sharingFinalizer } from "./reconciler";
import {
  type GrantRule,
  grantLabel,
  ownerLabel,
  type SharingPolicyResource,
  type SharingSpec,
  sharingAnnotations,
  sharingApiVersion,
  sharingKind,
  sharingPath,
} from "./types";

const logger = createLogger({ service: "sharing-it" }, "error");
const suffix = Date.now().toString(36).slice(-5);
const owner = `sho-${suffix}`;
const grantee = `shg-${suffix}`;
/** This suite's grants only: other suites may have grants (and controllers) in the same super cluster. */
const suiteLabel = "test.ring0.dev/sharing-suite";
const rbacVersion = "rbac.authorization.k8s.io/v1";

let superCluster: ClusterConnection;
let stateDir: string;
let provisioner: Provisioner;
let ownerConn: ClusterConnection;
let ownerAccess: ControlPlaneAccess;
const controllers: ReturnType<typeof startSharingController>[] = [];
const created: string[] = [];

const podsRule: GrantRule = {
  namespaces: ["shared"],
  apiGroups: [""],
  resources: ["pods", "pods/log"],
  verbs: ["get", "list", "watch"],
};

async function createGrant(
  name: string,
  spec: Partial<SharingSpec> = {},
  suite: "open" | "strict" | "wild" = "open",
): Promise<SharingPolicyResource> {
  created.push(name);
  return createObject<SharingPolicyResource>(superCluster, {
    apiVersion: sharingApiVersion,
    kind: sharingKind,
    metadata: { name, labels: { [suiteLabel]: `${suffix}-${suite}`, [ownerLabel]: owner } },
    spec: {
      ownerTenant: owner,
      grantees: [{ tenant: grantee }],
      rules: [podsRule],
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      purpose: "integration test",
      ...spec,
    },
  });
}

const grantRef = (name: string) => ({ apiVersion: sharingApiVersion, kind: sharingKind, metadata: { name } });
const readGrant = (name: string) => readObject<SharingPolicyResource>(superCluster, grantRef(name));
const condition = (grant: SharingPolicyResource, type: string) =>
  grant.status?.conditions?.find((candidate) => candidate.type === type);

const patchGrant = (name: string, body: unknown) =>
  kubeRequest<SharingPolicyResource>(superCluster, {
    method: "PATCH",
    path: `${sharingPath}/${name}`,
    contentType: "application/merge-patch+json",
    body,
  });

const readRbac = (kind: "Role" | "RoleBinding", grant: string, namespace = "shared") =>
  readOrUndefined<KubeObject>(ownerConn, ref(kind, grantRbacName(grant), namespace, rbacVersion));

/** Both objects of a grant in a namespace, once they exist. */
const rbacIn = (grant: string, namespace = "shared") =>
  eventually(async () => {
    const [role, binding] = await Promise.all([
      readRbac("Role", grant, namespace),
      readRbac("RoleBinding", grant, namespace),
    ]);
    return role && binding ? { role, binding } : undefined;
  }, 30_000);

/** Resolves once neither object of a grant exists in the namespace. */
const rbacGone = (grant: string, namespace = "shared", timeoutMs = 15_000) =>
  eventually(async () => {
    const [role, binding] = await Promise.all([
      readRbac("Role", grant, namespace),
      readRbac("RoleBinding", grant, namespace),
    ]);
    return !role && !binding ? true : undefined;
  }, timeoutMs);

/** A request in the owner's control plane as `user` with `groups` (what the kube gateway impersonates). */
function as(user: string, groups: string[]) {
  return (method: string, apiPath: string, body?: unknown) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const headers: Record<string, string | string[]> = {
        accept: "application/json",
        "impersonate-user": user,
        "impersonate-group": groups,
      };
      if (body !== undefined) {
        headers["content-type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
      }
      const request = https.request(
        new URL(ownerAccess.server + apiPath),
        {
          method,
          headers,
          ca: ownerAccess.ca,
          cert: ownerAccess.cert,
          key: ownerAccess.key,
          timeout: 15_000,
        },
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

const alice = granteeIdentity({ tenant: grantee, subject: `${grantee}:alice`, role: "tenant-member" });
const asGrantee = as(alice.user, alice.groups);
const asOwnerAdmin = as(kubeUserName(owner, "x"), [tenantGroup(owner), roleGroup(owner, "admin")]);

beforeAll(async () => {
  superCluster = testSuperCluster();
  await installCrds(superCluster, logger);
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-sharing-it-"));
  provisioner = createLocalProvisioner({ stateDir, logger });
  [ownerConn] = (await startTenants(superCluster, provisioner, [owner])) as [ClusterConnection];
  const access = await provisioner.access(owner);
  if (!access) throw new Error(`no admin access to ${owner}`);
  ownerAccess = access;
  // What the tenant controller would apply: namespaces, RBAC and the policy protecting Ring0's objects.
  await eventually(
    async () =>
      (await applyTenantDefaults(ownerConn, { tenant: owner, admins: [] })) === undefined ? true : undefined,
    90_000,
  );
  for (const namespace of ["shared", "other"]) await createObject(ownerConn, ref("Namespace", namespace));
  const directory = provisionerDirectory(new Set([owner]), () => provisioner);
  const common = { logger, directory, unavailableRetryMs: 500, missingNamespaceRetryMs: 1_000 };
  controllers.push(
    startSharingController(superCluster, {
      ...common,
      labelSelector: `${suiteLabel}=${suffix}-open`,
      policy: () => defaultSharingPolicy,
    }),
    startSharingController(superCluster, {
      ...common,
      labelSelector: `${suiteLabel}=${suffix}-strict`,
      policy: () => ({ ...defaultSharingPolicy, requireApproval: true }),
    }),
    startSharingController(superCluster, {
      ...common,
      labelSelector: `${suiteLabel}=${suffix}-wild`,
      policy: () => ({ ...defaultSharingPolicy, allowWildcards: true }),
    }),
  );
}, 150_000);

afterAll(async () => {
  // Deleted while the controllers run, so their finalizers are honoured.
  for (const name of created) await deleteObject(superCluster, grantRef(name)).catch(() => undefined);
  await eventually(async () => {
    for (const name of created) {
      if (await readOrUndefined(superCluster, grantRef(name))) return undefined;
    }
    return true;
  }, 20_000).catch(() => undefined);
  for (const controller of controllers) await controller.stop();
  for (const name of created) {
    await patchGrant(name, { metadata: { finalizers: null } }).catch(() => undefined);
  }
  await removeTenant(superCluster, provisioner, owner);
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

describe("the sharing controller", { timeout: 60_000 }, () => {
  const shared = `${owner}-pods`;

  it("gives a live grant a Role and RoleBinding in the owner's namespace, labelled as Ring0's", async () => {
    await createGrant(shared);
    const { role, binding } = await rbacIn(shared);
    for (const object of [role, binding]) {
      expect(object.metadata.labels).toMatchObject({
        ...managedLabels,
        [grantLabel]: shared,
        [ownerLabel]: owner,
      });
    }
    expect(role.rules).toEqual([
      { apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list", "watch"] },
    ]);
    expect(binding.subjects).toEqual([
      { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: tenantGroup(grantee) },
    ]);
    const grant = await eventually(async () => {
      const found = await readGrant(shared);
      return condition(found, "Ready")?.status === "True" ? found : undefined;
    });
    expect(grant.status?.state).toBe("Active");
    expect(grant.metadata.finalizers).toContain(sharingFinalizer);
    expect(grant.metadata.annotations?.[sharingAnnotations.approvedBy]).toBe(automaticApprover);
    expect(grant.metadata.annotations?.[sharingAnnotations.approvedSpec]).toBe(specHash(grant.spec));
    for (const type of ["Approved", "PolicyCompliant", "RBACApplied"]) {
      expect(condition(grant, type)).toMatchObject({
        status: "True",
        observedGeneration: grant.metadata.generation,
      });
    }
    const events = await eventually(async () => {
      const found = await listEventsFor(superCluster, { kind: sharingKind, name: shared });
      return found.some((event) => event.reason === "Active") ? found : undefined;
    });
    expect(events.map((event) => event.reason)).toContain("Active");
  });

  it("lets the grantee identity list pods in the shared namespace only, and never secrets", async () => {
    await rbacIn(shared);
    // The authorizer's cache takes the new binding a moment after it is written.
    await eventually(async () =>
      (await asGrantee("GET", "/api/v1/namespaces/shared/pods")).status === 200 ? true : undefined,
    );
    expect((await asGrantee("GET", "/api/v1/namespaces/shared/pods/nothing/log")).status).toBe(404);
    expect((await asGrantee("GET", "/api/v1/namespaces/default/pods")).status).toBe(403);
    expect((await asGrantee("GET", "/api/v1/namespaces/shared/secrets")).status).toBe(403);
    expect((await asGrantee("DELETE", "/api/v1/namespaces/shared/pods/anything")).status).toBe(403);
    expect((await asGrantee("GET", "/api/v1/pods")).status).toBe(403);
  });

  it("refuses the owner's tenant admins any edit or deletion of the grant's Role and RoleBinding", async () => {
    await rbacIn(shared);
    const name = encodeURIComponent(grantRbacName(shared));
    for (const resource of ["roles", "rolebindings"]) {
      const objectPath = `/apis/${rbacVersion}/namespaces/shared/${resource}/${name}`;
      // Readable: admins may see what their tenant shares.
      expect((await asOwnerAdmin("GET", objectPath)).status).toBe(200);
      const patched = await asOwnerAdmin("PATCH", objectPath, { metadata: { annotations: { mine: "yes" } } });
      expect(patched.status).toBe(403);
      expect(patched.text).toContain("managed by Ring0");
      const deleted = await asOwnerAdmin("DELETE", objectPath);
      expect(deleted.status).toBe(403);
      expect(deleted.text).toContain("managed by Ring0");
    }
    // Widening the Role (say, to secrets) is an edit of it: refused the same way.
    const widened = await asOwnerAdmin("PATCH", `/apis/${rbacVersion}/namespaces/shared/roles/${name}`, {
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
    });
    expect(widened.status).toBe(403);
  });

  it("lets tenant admins bind a share Role to more subjects only within their own rights (RBAC's escalation check)", async () => {
    // Within their rights: admins may read pods themselves, so binding the share Role to someone
    // else grants nothing they could not grant with a Role of their own. RBAC allows it, unprotected.
    await rbacIn(shared);
    const bindingOf = (role: string, bindingName: string) => ({
      apiVersion: rbacVersion,
      kind: "RoleBinding",
      metadata: { name: bindingName, namespace: "shared" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "ring0:tenant:elsewhere" }],
    });
    const within = await asOwnerAdmin(
      "POST",
      `/apis/${rbacVersion}/namespaces/shared/rolebindings`,
      bindingOf(grantRbacName(shared), "extra-readers"),
    );
    expect(within.status).toBe(201);
    expect(JSON.parse(within.text).metadata.labels?.["ring0.dev/protected"]).toBeUndefined();

    // Beyond them: a grant to delete pod metrics (which Ring0's tenant admins only read: the
    // shared nodes' kubelets measure them) becomes a share Role the admins cannot bind to anyone:
    // RBAC refuses a binding to rights the binder lacks.
    const proxy = `${owner}-status`;
    await createGrant(proxy, {
      rules: [
        {
          namespaces: ["shared"],
          apiGroups: ["metrics.k8s.io"],
          resources: ["pods"],
          verbs: ["delete"],
        },
      ],
    });
    await rbacIn(proxy);
    const beyond = await asOwnerAdmin(
      "POST",
      `/apis/${rbacVersion}/namespaces/shared/rolebindings`,
      bindingOf(grantRbacName(proxy), "status-for-me"),
    );
    expect(beyond.status).toBe(403);
    expect(beyond.text).toMatch(/not currently held|escalat/);
    // Nor can they carry Ring0's label onto a binding of their own (the protection policy).
    const labelled = await asOwnerAdmin("POST", `/apis/${rbacVersion}/namespaces/shared/rolebindings`, {
      ...bindingOf(grantRbacName(shared), "looks-like-ring0"),
      metadata: { name: "looks-like-ring0", namespace: "shared", labels: managedLabels },
    });
    expect(labelled.status).toBe(403);
    await deleteObject(ownerConn, ref("RoleBinding", "extra-readers", "shared", rbacVersion));
  });

  it("removes the RBAC within seconds of a revocation", async () => {
    const name = `${owner}-revoke`;
    await createGrant(name);
    await rbacIn(name);
    await eventually(async () => ((await readGrant(name)).status?.state === "Active" ? true : undefined));
    // The gateway records use in status.lastUsedAt; the controller's status writes must keep it.
    const lastUsedAt = new Date(Date.now() - 1_000).toISOString().replace(/\.\d+Z$/, "Z");
    await kubeRequest(superCluster, {
      method: "PATCH",
      path: `${sharingPath}/${name}/status`,
      contentType: "application/merge-patch+json",
      body: { status: { lastUsedAt } },
    });
    const revokedAt = Date.now();
    await patchGrant(name, {
      metadata: {
        annotations: {
          [sharingAnnotations.revokedAt]: new Date().toISOString(),
          [sharingAnnotations.revokedBy]: "ops",
        },
      },
    });
    await rbacGone(name, "shared", 10_000);
    expect(Date.now() - revokedAt).toBeLessThan(10_000);
    const grant = await eventually(async () => {
      const found = await readGrant(name);
      return found.status?.state === "Revoked" ? found : undefined;
    });
    expect(condition(grant, "Ready")).toMatchObject({ status: "False", reason: "Revoked" });
    expect(condition(grant, "RBACApplied")).toMatchObject({ status: "False", reason: "Removed" });
    expect(grant.status?.lastUsedAt).toBe(lastUsedAt);
  });

  it("removes the RBAC at the grant's expiry, with no change to the grant", async () => {
    const name = `${owner}-expire`;
    const expiresAt = new Date(Date.now() + 10_000);
    await createGrant(name, { expiresAt: expiresAt.toISOString() });
    await rbacIn(name);
    await rbacGone(name, "shared", 20_000);
    // Gone at the expiry (the controller comes back a second after it), not at some later resync.
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt.getTime());
    expect(Date.now() - expiresAt.getTime()).toBeLessThan(6_000);
    const grant = await eventually(async () => {
      const found = await readGrant(name);
      return found.status?.state === "Expired" ? found : undefined;
    });
    // Judged as it stood before its expiry: an ended grant does not break the policy.
    expect(condition(grant, "PolicyCompliant")?.status).toBe("True");
  });

  it("creates nothing under requireApproval until an approval of the current spec", async () => {
    const name = `${owner}-approve`;
    await createGrant(name, {}, "strict");
    const pending = await eventually(async () => {
      const found = await readGrant(name);
      return found.status?.state === "PendingApproval" ? found : undefined;
    });
    expect(pending.metadata.finalizers).toContain(sharingFinalizer);
    expect(pending.metadata.annotations?.[sharingAnnotations.approvedSpec]).toBeUndefined();
    expect(condition(pending, "Approved")).toMatchObject({ status: "False", reason: "AwaitingApproval" });
    expect(await readRbac("Role", name)).toBeUndefined();

    // An approval of some other spec does not count.
    await patchGrant(name, {
      metadata: {
        annotations: {
          [sharingAnnotations.approvedSpec]: "sha256:0",
          [sharingAnnotations.approvedBy]: "ops",
        },
      },
    });
    await eventually(async () => {
      const found = await readGrant(name);
      return condition(found, "Approved")?.reason === "ChangedSinceApproval" ? true : undefined;
    });
    expect(await readRbac("Role", name)).toBeUndefined();

    await patchGrant(name, {
      metadata: { annotations: { [sharingAnnotations.approvedSpec]: specHash(pending.spec) } },
    });
    await rbacIn(name);
    const active = await eventually(async () => {
      const found = await readGrant(name);
      return found.status?.state === "Active" ? found : undefined;
    });
    expect(condition(active, "Approved")).toMatchObject({ status: "True", reason: "Approved" });
  });

  it("leaves a grant beyond the operator policy pending, naming the rule, with no RBAC", async () => {
    const name = `${owner}-secrets`;
    await createGrant(name, {
      rules: [{ namespaces: ["shared"], apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
    });
    const grant = await eventually(async () => {
      const found = await readGrant(name);
      return condition(found, "PolicyCompliant") ? found : undefined;
    });
    expect(grant.status?.state).toBe("PendingApproval");
    expect(condition(grant, "PolicyCompliant")).toMatchObject({ status: "False", reason: "BeyondPolicy" });
    expect(condition(grant, "PolicyCompliant")?.message).toContain("deniedResources");
    expect(condition(grant, "Ready")).toMatchObject({ status: "False", reason: "BeyondPolicy" });
    expect(grant.metadata.annotations?.[sharingAnnotations.approvedSpec]).toBeUndefined();
    expect(await readRbac("Role", name)).toBeUndefined();
  });

  it("gives no RBAC to a grant beyond policy even when an operator's approval is written on it", async () => {
    const name = `${owner}-forced`;
    const spec = {
      ...(
        await createGrant(
          name,
          {
            rules: [{ namespaces: ["shared"], apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
          },
          "strict",
        )
      ).spec,
    };
    await eventually(async () =>
      (await readGrant(name)).status?.state === "PendingApproval" ? true : undefined,
    );
    // An approval annotation written by hand (the portal refuses to approve such a grant).
    await patchGrant(name, {
      metadata: {
        annotations: {
          [sharingAnnotations.approvedSpec]: specHash(spec),
          [sharingAnnotations.approvedBy]: "ops",
        },
      },
    });
    const grant = await eventually(async () => {
      const found = await readGrant(name);
      return found.status?.state === "Active" ? found : undefined;
    });
    expect(condition(grant, "RBACApplied")).toMatchObject({ status: "False", reason: "BeyondPolicy" });
    expect(condition(grant, "Ready")).toMatchObject({ status: "False", reason: "BeyondPolicy" });
    expect(await readRbac("Role", name)).toBeUndefined();
    expect(await readRbac("RoleBinding", name)).toBeUndefined();
  });

  it("removes the RBAC when the grant is deleted, then lets the grant go", async () => {
    const name = `${owner}-delete`;
    await createGrant(name);
    await rbacIn(name);
    await eventually(async () =>
      (await readGrant(name)).metadata.finalizers?.includes(sharingFinalizer) ? true : undefined,
    );
    await deleteObject(superCluster, grantRef(name));
    await rbacGone(name);
    await eventually(async () => {
      try {
        await readGrant(name);
        return undefined;
      } catch (error) {
        return isNotFound(error) ? true : undefined;
      }
    });
  });

  it("moves the RBAC when the grant's namespaces change", async () => {
    const name = `${owner}-move`;
    await createGrant(name);
    await rbacIn(name, "shared");
    const grant = await readGrant(name);
    await patchGrant(name, { spec: { rules: [{ ...podsRule, namespaces: ["other"] }] } });
    await rbacIn(name, "other");
    await rbacGone(name, "shared");
    const moved = await eventually(async () => {
      const found = await readGrant(name);
      return (found.metadata.generation ?? 0) > (grant.metadata.generation ?? 0) &&
        condition(found, "Ready")?.observedGeneration === found.metadata.generation &&
        condition(found, "Ready")?.status === "True"
        ? found
        : undefined;
    });
    // The edit needed approving again; with no approval required, Ring0 approved the new spec.
    expect(moved.metadata.annotations?.[sharingAnnotations.approvedSpec]).toBe(specHash(moved.spec));
  });

  it("applies what it can when a namespace is missing, and says which", async () => {
    const name = `${owner}-missing`;
    await createGrant(name, { rules: [{ ...podsRule, namespaces: ["shared", "nowhere"] }] });
    await rbacIn(name, "shared");
    const grant = await eventually(async () => {
      const found = await readGrant(name);
      return condition(found, "RBACApplied")?.reason === "NamespaceMissing" ? found : undefined;
    });
    expect(condition(grant, "RBACApplied")?.message).toContain('"nowhere"');
    expect(condition(grant, "Ready")?.status).toBe("False");
    // Once the namespace exists, the next retry fills it in.
    await createObject(ownerConn, ref("Namespace", "nowhere"));
    await rbacIn(name, "nowhere");
  });

  it("removes share RBAC whose grant no longer exists", async () => {
    // What a grant deleted with its finalizer removed by hand leaves behind.
    const ghost = `${owner}-ghost`;
    const labels = { ...managedLabels, [grantLabel]: ghost, [ownerLabel]: owner };
    const name = grantRbacName(ghost);
    await createObject(ownerConn, {
      ...ref("Role", name, "shared", rbacVersion),
      metadata: { name, namespace: "shared", labels },
      rules: [],
    });
    await createObject(ownerConn, {
      ...ref("RoleBinding", name, "shared", rbacVersion),
      metadata: { name, namespace: "shared", labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: tenantGroup(grantee) }],
    });
    // A tenant admin's own binding that copies the grant label (not Ring0's protected one) is theirs.
    const copied = await asOwnerAdmin("POST", `/apis/${rbacVersion}/namespaces/shared/rolebindings`, {
      apiVersion: rbacVersion,
      kind: "RoleBinding",
      metadata: { name: "copied-label", namespace: "shared", labels: { [grantLabel]: ghost } },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: grantRbacName(`${owner}-pods`) },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: tenantGroup(owner) }],
    });
    expect(copied.status).toBe(201);
    // The sweep runs at the start of a term and at every resync; ask for one now.
    controllers[0]?.controller.enqueue(orphanSweepKey);
    await rbacGone(ghost);
    expect(
      await readOrUndefined(ownerConn, ref("RoleBinding", "copied-label", "shared", rbacVersion)),
    ).toBeDefined();
  });

  it("removes a grant's RBAC from its old owner when the grant moves to another owner", async () => {
    const name = `${owner}-moved-owner`;
    await createGrant(name);
    await rbacIn(name);
    await patchGrant(name, { spec: { ownerTenant: `${owner}-elsewhere` } });
    await rbacGone(name);
    const grant = await eventually(async () => {
      const found = await readGrant(name);
      return condition(found, "Ready")?.reason === "OwnerNotFound" ? found : undefined;
    });
    expect(condition(grant, "Ready")?.message).toContain(`"${owner}-elsewhere"`);
  });

  it("reports the owner's refusal of a grant's RBAC in a condition and keeps serving the others", async () => {
    // A name longer than a label value: the API server refuses the Role's grant label.
    const name = `${owner}-${"x".repeat(60)}`;
    await createGrant(name);
    const grant = await eventually(async () => {
      const found = await readGrant(name);
      return condition(found, "RBACApplied")?.reason === "Refused" ? found : undefined;
    });
    expect(condition(grant, "RBACApplied")?.message).toMatch(/no more than 63/);
    expect(condition(grant, "Ready")?.status).toBe("False");
    // The controller still serves other grants.
    const after = `${owner}-after`;
    await createGrant(after);
    await rbacIn(after);
  });

  it('spells a wildcard grant out as the resources the owner serves: the Role holds no "*", and Secrets, RBAC and tokens stay out', async () => {
    const name = `${owner}-wild`;
    await createGrant(
      name,
      { rules: [{ namespaces: ["other"], apiGroups: ["*"], resources: ["*"], verbs: ["get", "list"] }] },
      "wild",
    );
    const { role } = await rbacIn(name, "other");
    const rules = (role.rules ?? []) as Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
    expect(JSON.stringify(rules)).not.toContain('"*"');
    const reached = rules.flatMap((rule) =>
      rule.resources.map((resource) => `${rule.apiGroups[0]}:${resource}`),
    );
    for (const resource of [":pods", ":pods/log", ":configmaps", ":services", "apps:deployments"])
      expect(reached).toContain(resource);
    for (const resource of [
      ":secrets",
      ":serviceaccounts/token",
      ":pods/proxy",
      "rbac.authorization.k8s.io:roles",
    ])
      expect(reached).not.toContain(resource);
    expect(rules.every((rule) => rule.verbs.join() === "get,list")).toBe(true);
    // What the owner's API server itself allows the grantee identity: the second wall holds.
    await eventually(async () =>
      (await asGrantee("GET", "/api/v1/namespaces/other/configmaps")).status === 200 ? true : undefined,
    );
    expect((await asGrantee("GET", "/api/v1/namespaces/other/secrets")).status).toBe(403);
    expect((await asGrantee("GET", `/apis/${rbacVersion}/namespaces/other/rolebindings`)).status).toBe(403);
    expect((await asGrantee("DELETE", "/api/v1/namespaces/other/configmaps/anything")).status).toBe(403);
    expect(
      (await asGrantee("POST", "/api/v1/namespaces/other/serviceaccounts/default/token", { spec: {} }))
        .status,
    ).toBe(403);
    const grant = await eventually(async () => {
      const found = await readGrant(name);
      return condition(found, "Ready")?.status === "True" ? found : undefined;
    });
    expect(grant.status?.state).toBe("Active");
  });
});
