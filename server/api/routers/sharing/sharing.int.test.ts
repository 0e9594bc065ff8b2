/**
 * The sharing procedures against the real world: SharingPolicy and Tenant objects in the run's
 * super cluster, members and audit events in PostgreSQL. The controller is not running here, so
 * every state below is the one Ring0 writes at once (approval annotations) or computes from the
 * clock (expiry).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAuditRepository } from "@/server/audit/repository";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb } from "@/server/db/client";
import { createObject, deleteObject } from "@/server/k8s/apply";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { specHash } from "@/server/sharing/grants";
import { defaultSharingPolicy } from "@/server/sharing/policy";
import { automaticApprover, overrideSharingPolicy } from "@/server/sharing/service";
import {
  type SharingPolicyResource,
  type SharingSpec,
  sharingAnnotations,
  sharingApiVersion,
  sharingKind,
} from "@/server/sharing/types";
import { deleteTenantResource } from "@/server/tenants/tenant-resources";
import { createUserRepository } from "@/server/users/repository";
import { signInTenantAdmin } from "@/test/integration/control-plane-access";
import { setUpTenantSuite } from "@/test/integration/tenant-suite";
import { type DemoKey, seedDemoUsers, testCaller, testOperator, trpcOutcome } from "@/test/integration/trpc";

const runId = Date.now().toString(36);
const owner = `sso-${runId}`;
const grantee = `ssg-${runId}`;
const third = `sst-${runId}`;
const tenants = [owner, grantee, third];
const namespace = "shared";

const operator = testOperator();
let conn: ClusterConnection;
let users: Record<DemoKey, SessionUser>;
let ownerAdmin: SessionUser;
let ownerMember: SessionUser;
let granteeAdmin: SessionUser;
let thirdAdmin: SessionUser;

const caller = (user: SessionUser) => testCaller(user, getDb(), `req-${runId}`);
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

const readPods = {
  namespaces: [namespace],
  apiGroups: [""],
  resources: ["pods", "pods/log"],
  verbs: ["get", "list", "watch"],
};

function grantInput(name: string, overrides: Record<string, unknown> = {}) {
  return {
    tenant: owner,
    name,
    grantees: [{ tenant: grantee }],
    rules: [readPods],
    expiresAt: inDays(7),
    purpose: "Debug the checkout service together",
    ...overrides,
  };
}

async function auditRows(action: string, target: string) {
  return getDb().auditEvent.findMany({ where: { tenant: owner, action, target }, orderBy: { at: "asc" } });
}

beforeAll(async () => {
  conn = await setUpTenantSuite(operator);
  setSuperCluster(conn);
  users = await seedDemoUsers(getDb());
  for (const name of tenants) {
    await caller(operator).tenants.create({
      name,
      displayName: `Sharing ${name}`,
      version: "1.36",
      admins: [],
    });
  }
  ownerAdmin = await signInTenantAdmin(getDb(), owner);
  granteeAdmin = await signInTenantAdmin(getDb(), grantee);
  thirdAdmin = await signInTenantAdmin(getDb(), third);
  const member = {
    subject: `${owner}:${owner}-member`,
    tenant: owner,
    name: `Member of ${owner}`,
    role: "tenant-member" as const,
    email: null,
  };
  ownerMember = { ...member, id: (await createUserRepository(getDb()).recordSignIn(member, new Date())).id };
}, 60_000);

afterAll(async () => {
  overrideSharingPolicy(null);
  const grants = await caller(operator).sharing.operator.list({ owner });
  for (const grant of grants) {
    await deleteObject(conn, {
      apiVersion: sharingApiVersion,
      kind: sharingKind,
      metadata: { name: grant.name },
    });
  }
  for (const name of tenants) await deleteTenantResource(name).catch(() => undefined);
  setSuperCluster(null);
  await disconnectDb();
});

describe("an owner's tenant admin", () => {
  it("creates a grant that is active at once when the policy needs no approval", async () => {
    const grant = await caller(ownerAdmin).sharing.create(grantInput("debug"));
    expect(grant).toMatchObject({
      name: `${owner}.debug`,
      shortName: "debug",
      owner,
      ownerDisplayName: `Sharing ${owner}`,
      grantees: [{ tenant: grantee }],
      state: "Active",
      requestedBy: ownerAdmin.name,
      approvedBy: automaticApprover,
      revokedAt: null,
    });
    const { grants, canChange } = await caller(ownerAdmin).sharing.list({ tenant: owner });
    expect(canChange).toBe(true);
    expect(grants.map((listed) => listed.shortName)).toContain("debug");
    const [row] = await auditRows("share.create", `${owner}.debug`);
    expect(row).toMatchObject({ actorName: ownerAdmin.name, targetKind: "SharingPolicy", result: "success" });
    expect(row?.detail).toMatchObject({ spec: { rules: [readPods] } });
  });

  it("cannot take a name the tenant already uses", async () => {
    const [code, message] = await trpcOutcome(caller(ownerAdmin).sharing.create(grantInput("debug")));
    expect(code).toBe("CONFLICT");
    expect(message).toContain('already has a grant named "debug"');
  });

  it("edits a grant, guarded against concurrent edits, and the audit log records the change", async () => {
    const { grant: before } = await caller(ownerAdmin).sharing.get({ tenant: owner, name: "debug" });
    const logs = { ...readPods, resources: ["pods/log"] };
    const after = await caller(ownerAdmin).sharing.update({
      ...grantInput("debug", { rules: [logs], purpose: "Read the logs only" }),
      resourceVersion: before.resourceVersion ?? undefined,
    });
    expect(after).toMatchObject({ rules: [logs], purpose: "Read the logs only", state: "Active" });
    const [code] = await trpcOutcome(
      caller(ownerAdmin).sharing.update({
        ...grantInput("debug"),
        resourceVersion: before.resourceVersion ?? undefined,
      }),
    );
    expect(code).toBe("CONFLICT");
    const [row] = await auditRows("share.update", `${owner}.debug`);
    expect(row?.detail).toMatchObject({
      changes: {
        rules: { from: [readPods], to: [logs] },
        purpose: { from: "Debug the checkout service together", to: "Read the logs only" },
      },
    });
  });

  it("sees who used a grant, newest first, page by page, with the grant's history", async () => {
    const audit = createAuditRepository(getDb());
    for (const [index, verb] of ["list", "get", "watch"].entries()) {
      await audit.record({
        actorName: `Gina ${index}`,
        actorTenant: grantee,
        tenant: owner,
        action: "share.used",
        targetKind: "Pod",
        target: "web",
        result: "success",
        detail: {
          grant: `${owner}.debug`,
          verb,
          resource: "pods",
          namespace,
          via: "kubectl",
          count: index + 1,
        },
      });
    }
    await audit.record({
      actorName: "Someone else",
      tenant: owner,
      action: "share.used",
      result: "success",
      detail: { grant: `${owner}.other`, verb: "get", resource: "pods", namespace, via: "portal", count: 1 },
    });
    const first = await caller(ownerAdmin).sharing.usage({ tenant: owner, name: "debug", limit: 2 });
    expect(first.uses.map((use) => [use.who, use.verb, use.count])).toEqual([
      ["Gina 2", "watch", 3],
      ["Gina 1", "get", 2],
    ]);
    expect(first.uses[0]).toMatchObject({ whoTenant: grantee, resource: "pods", namespace, via: "kubectl" });
    expect(first.changes.map((change) => change.action)).toEqual(["share.update", "share.create"]);
    const second = await caller(ownerAdmin).sharing.usage({
      tenant: owner,
      name: `${owner}.debug`,
      limit: 2,
      cursor: first.nextCursor ?? undefined,
    });
    expect(second.uses.map((use) => use.who)).toEqual(["Gina 0"]);
    expect(second.nextCursor).toBeNull();
  });

  it("revokes a grant at once; it stays listed, cannot be edited, and revoking again changes nothing", async () => {
    const revoked = await caller(ownerAdmin).sharing.revoke({ tenant: owner, name: "debug" });
    expect(revoked).toMatchObject({ state: "Revoked", revokedBy: ownerAdmin.name });
    expect(revoked.message).toContain(`Revoked by ${ownerAdmin.name}`);
    await caller(ownerAdmin).sharing.revoke({ tenant: owner, name: "debug" });
    expect(await auditRows("share.revoke", `${owner}.debug`)).toHaveLength(1);
    const [code, message] = await trpcOutcome(caller(ownerAdmin).sharing.update(grantInput("debug")));
    expect([code, message]).toEqual([
      "CONFLICT",
      'Grant "debug" is revoked and cannot be edited; create a new grant instead.',
    ]);
  });

  it("deletes a grant", async () => {
    expect(await caller(ownerAdmin).sharing.delete({ tenant: owner, name: "debug" })).toEqual({
      name: `${owner}.debug`,
      deleted: true,
    });
    const { grants } = await caller(ownerAdmin).sharing.list({ tenant: owner });
    expect(grants.map((listed) => listed.shortName)).not.toContain("debug");
    expect((await trpcOutcome(caller(ownerAdmin).sharing.get({ tenant: owner, name: "debug" })))[0]).toBe(
      "NOT_FOUND",
    );
    expect(await auditRows("share.delete", `${owner}.debug`)).toHaveLength(1);
  });

  it("sees a grant expire at its instant, without waiting for any controller", async () => {
    await caller(ownerAdmin).sharing.create(
      grantInput("brief", { expiresAt: new Date(Date.now() + 1_500).toISOString() }),
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const { grant } = await caller(ownerMember).sharing.get({ tenant: owner, name: "brief" });
    expect(grant.state).toBe("Expired");
  });
});

describe("the operator policy", () => {
  const refusal = async (overrides: Record<string, unknown>) => {
    const [code, message] = await trpcOutcome(
      caller(ownerAdmin).sharing.create(grantInput("refused", overrides)),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toMatch(/^The grant breaks the sharing policy: /);
    return message;
  };

  it("refuses grants beyond it, each message naming the rule broken, and creates nothing", async () => {
    expect(await refusal({ rules: [{ ...readPods, resources: ["secrets"] }] })).toContain(
      '"secrets" is not shareable under the operator policy (deniedResources)',
    );
    expect(await refusal({ rules: [{ ...readPods, verbs: ["*"] }] })).toContain(
      '"*" verbs are not allowed by the operator policy (allowWildcards)',
    );
    expect(await refusal({ expiresAt: undefined })).toContain("(maxExpiryDays)");
    expect(await refusal({ expiresAt: inDays(91) })).toContain(
      "grants may last at most 90 days under the operator policy (maxExpiryDays)",
    );
    expect(await refusal({ rules: [{ ...readPods, resources: ["nodes"] }] })).toContain(
      '"nodes" is cluster-scoped; grants cover namespaced resources only',
    );
    expect(
      await refusal({
        rules: [{ ...readPods, apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"] }],
      }),
    ).toContain('API group "rbac.authorization.k8s.io" is never shareable');
    expect(await refusal({ grantees: [{ tenant: owner }] })).toContain("a tenant cannot share with itself");
    expect(await refusal({ rules: [{ ...readPods, namespaces: ["*"] }] })).toContain("name the namespaces");
    const { grants } = await caller(ownerAdmin).sharing.list({ tenant: owner });
    expect(grants.map((listed) => listed.shortName)).not.toContain("refused");
  });

  it("accepts a grantee tenant that does not exist, so an owner cannot probe which tenants exist", async () => {
    const grant = await caller(ownerAdmin).sharing.create(
      grantInput("nobody-yet", { grantees: [{ tenant: `nosuch-${runId}` }] }),
    );
    expect(grant).toMatchObject({ grantees: [{ tenant: `nosuch-${runId}` }], state: "Active" });
  });

  it("says the same about the operators' tenant and one the policy keeps from receiving", async () => {
    const operators = await refusal({ grantees: [{ tenant: operator.tenant }] });
    expect(operators).toContain(
      `tenant "${operator.tenant}" cannot receive grants (operator policy: grantees)`,
    );
    overrideSharingPolicy({ ...defaultSharingPolicy, grantees: [third] });
    try {
      const forbidden = await refusal({});
      expect(forbidden).toBe(operators.replaceAll(`"${operator.tenant}"`, `"${grantee}"`));
    } finally {
      overrideSharingPolicy(null);
    }
  });

  it("reports bad shapes by field before the policy", async () => {
    const [code, message] = await trpcOutcome(
      caller(ownerAdmin).sharing.create(grantInput("Bad Name", { rules: [], purpose: " " })),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toContain("name: expected a grant name of lowercase letters");
    expect(message).toContain("rules: name at least one rule");
    expect(message).toContain("purpose: say what the access is for (purpose)");
  });

  it("is readable by anyone signed in", async () => {
    const policy = await caller(ownerMember).sharing.policy();
    expect(policy).toMatchObject({ requireApproval: false, maxExpiryDays: 90, deniedResources: ["secrets"] });
    expect(policy.floorApiGroups).toContain("rbac.authorization.k8s.io");
  });

  it("names its grantors and grantees to operators only; everyone else learns only their own tenant's standing", async () => {
    overrideSharingPolicy({ ...defaultSharingPolicy, grantors: [owner, grantee], grantees: [third] });
    try {
      expect(await caller(operator).sharing.policy()).toMatchObject({
        grantors: [owner, grantee],
        grantees: [third],
      });
      expect(await caller(ownerMember).sharing.policy()).toMatchObject({
        grantors: null,
        grantees: null,
        canGrant: true,
        canReceive: false,
      });
      expect(await caller(thirdAdmin).sharing.policy()).toMatchObject({
        grantors: null,
        grantees: null,
        canGrant: false,
        canReceive: true,
      });
      const outside = JSON.stringify(await caller(thirdAdmin).sharing.policy());
      expect(outside).not.toContain(owner);
      expect(outside).not.toContain(grantee);
    } finally {
      overrideSharingPolicy(null);
    }
    expect(await caller(granteeAdmin).sharing.policy()).toMatchObject({
      grantors: null,
      grantees: null,
      canGrant: true,
      canReceive: true,
    });
  });
});

describe("approval", () => {
  it("keeps a grant pending until an operator approves it, and again after every edit", async () => {
    overrideSharingPolicy({ ...defaultSharingPolicy, requireApproval: true });
    try {
      const created = await caller(ownerAdmin).sharing.create(grantInput("review"));
      expect(created).toMatchObject({ state: "PendingApproval", approvedBy: null });
      const pending = await caller(operator).sharing.operator.list({ state: "PendingApproval", owner });
      expect(pending.map((grant) => grant.name)).toEqual([`${owner}.review`]);

      expect(
        (await trpcOutcome(caller(ownerAdmin).sharing.operator.approve({ name: created.name })))[0],
      ).toBe("FORBIDDEN");
      const approved = await caller(operator).sharing.operator.approve({ name: created.name });
      expect(approved).toMatchObject({ state: "Active", approvedBy: operator.name });
      const [row] = await auditRows("share.approve", created.name);
      expect(row?.actorName).toBe(operator.name);

      const edited = await caller(ownerAdmin).sharing.update(
        grantInput("review", { purpose: "Longer story" }),
      );
      expect(edited.state).toBe("PendingApproval");
      expect(edited.message).toContain("changed since it was approved");

      overrideSharingPolicy({
        ...defaultSharingPolicy,
        requireApproval: true,
        deniedResources: ["pods/log"],
      });
      const [code, message] = await trpcOutcome(
        caller(operator).sharing.operator.approve({ name: created.name }),
      );
      expect(code).toBe("BAD_REQUEST");
      expect(message).toContain('"pods/log" is not shareable under the operator policy (deniedResources)');

      const revoked = await caller(operator).sharing.operator.revoke({ name: created.name });
      expect(revoked).toMatchObject({ state: "Revoked", revokedBy: operator.name });
      expect(
        (await caller(operator).sharing.operator.list({ state: "Revoked", owner })).map((g) => g.name),
      ).toEqual([created.name]);
    } finally {
      overrideSharingPolicy(null);
    }
  });
});

describe("who may do what", () => {
  it("lets the owner's members read grants but not change them", async () => {
    await caller(ownerAdmin).sharing.create(grantInput("members"));
    const { grants, canChange } = await caller(ownerMember).sharing.list({ tenant: owner });
    expect(canChange).toBe(false);
    expect(grants.map((grant) => grant.shortName)).toContain("members");
    expect((await caller(ownerMember).sharing.get({ tenant: owner, name: "members" })).grant.state).toBe(
      "Active",
    );
    for (const attempt of [
      () => caller(ownerMember).sharing.create(grantInput("by-member")),
      () => caller(ownerMember).sharing.update(grantInput("members")),
      () => caller(ownerMember).sharing.revoke({ tenant: owner, name: "members" }),
      () => caller(ownerMember).sharing.delete({ tenant: owner, name: "members" }),
      () => caller(ownerMember).sharing.usage({ tenant: owner, name: "members" }),
      () => caller(ownerMember).sharing.operator.list({}),
    ]) {
      expect((await trpcOutcome(attempt()))[0]).toBe("FORBIDDEN");
    }
  });

  it("shows other tenants nothing, grantees included: a grant cannot make more grants", async () => {
    for (const outsider of [granteeAdmin, thirdAdmin]) {
      for (const attempt of [
        () => caller(outsider).sharing.list({ tenant: owner }),
        () => caller(outsider).sharing.get({ tenant: owner, name: "members" }),
        () => caller(outsider).sharing.create(grantInput("sneaky")),
        () => caller(outsider).sharing.revoke({ tenant: owner, name: "members" }),
        () => caller(outsider).sharing.usage({ tenant: owner, name: "members" }),
      ]) {
        expect(await trpcOutcome(attempt())).toEqual(["NOT_FOUND", `Tenant "${owner}" was not found.`]);
      }
    }
  });

  it("a globex user with a live grant from acme gets NOT_FOUND creating grants of acme", async () => {
    const spec: SharingSpec = {
      ownerTenant: "acme",
      grantees: [{ tenant: "globex", users: ["globex-admin"] }],
      rules: [{ ...readPods, namespaces: [`sh-${runId}`] }],
      expiresAt: inDays(1),
      purpose: "Isolation test",
    };
    const name = `acme.isolation-${runId}`;
    const live = await createObject<SharingPolicyResource>(conn, {
      apiVersion: sharingApiVersion,
      kind: sharingKind,
      metadata: { name, annotations: { [sharingAnnotations.approvedSpec]: specHash(spec) } },
      spec,
    });
    try {
      expect(live.metadata.name).toBe(name);
      const [code] = await trpcOutcome(
        caller(users.globexAdmin).sharing.create({
          ...grantInput("more"),
          tenant: "acme",
          grantees: [{ tenant: "globex" }],
        }),
      );
      expect(code).toBe("NOT_FOUND");
      expect((await trpcOutcome(caller(users.globexAdmin).sharing.list({ tenant: "acme" })))[0]).toBe(
        "NOT_FOUND",
      );
    } finally {
      await deleteObject(conn, { apiVersion: sharingApiVersion, kind: sharingKind, metadata: { name } });
    }
  });
});
