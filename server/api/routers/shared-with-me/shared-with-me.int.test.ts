/**
 * "Shared with me" against the real world: SharingPolicy and Tenant objects in the run's super
 * cluster (approved by the annotation Ring0 writes, so they are live), users, tokens and audit
 * events in PostgreSQL, through the tRPC router. Tenants are unique per run, so grants of other
 * suites sharing the super cluster cannot show up here.
 */
import { load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb } from "@/server/db/client";
import { createObject, deleteObject } from "@/server/k8s/apply";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { setGatewayEndpoint } from "@/server/kubeconfigs/gateway-endpoint";
import { specHash } from "@/server/sharing/grants";
import { grantsOfSharedNamespace } from "@/server/sharing/shared-with-me";
import {
  type GrantRule,
  ownerLabel,
  type SharingSpec,
  sharingAnnotations,
  sharingApiVersion,
  sharingKind,
} from "@/server/sharing/types";
import { tenantApiVersion, tenantKind } from "@/server/tenants/tenant-resources";
import { createTokenService } from "@/server/tokens/service";
import { createUserRepository } from "@/server/users/repository";
import { setUpTenantSuite } from "@/test/integration/tenant-suite";
import { testCaller, testOperator, trpcOutcome } from "@/test/integration/trpc";

const runId = Date.now().toString(36);
/** The owner with a Tenant object (a display name), one without, the grantee tenant and a third one. */
const owner = `sw-${runId}-acme`;
const bareOwner = `sw-${runId}-bare`;
const grantee = `sw-${runId}-globex`;
const third = `sw-${runId}-initech`;
const grantNames: string[] = [];

const operator = testOperator();
let conn: ClusterConnection;
let member: SessionUser;
let admin: SessionUser;
let outsider: SessionUser;

const caller = (user: SessionUser) => testCaller(user, getDb(), `req-${runId}`);

async function signIn(tenant: string, name: string, role: SessionUser["role"]): Promise<SessionUser> {
  const identity = { subject: `${tenant}:${name}`, tenant, name: `${name} of ${tenant}`, role, email: null };
  const user = await createUserRepository(getDb()).recordSignIn(identity, new Date());
  return { ...identity, id: user.id };
}

const podsRead: GrantRule = {
  namespaces: ["shared"],
  apiGroups: [""],
  resources: ["pods", "pods/log"],
  verbs: ["get", "list", "watch"],
};

/** A SharingPolicy as the owner's admin would create it; approved (live) unless `approved` is false. */
async function createGrant(
  name: string,
  spec: Omit<SharingSpec, "purpose"> & { purpose?: string },
  approved = true,
): Promise<string> {
  const full: SharingSpec = { purpose: `test ${name}`, ...spec };
  const fullName = `${spec.ownerTenant}-${name}`;
  grantNames.push(fullName);
  await createObject(conn, {
    apiVersion: sharingApiVersion,
    kind: sharingKind,
    metadata: {
      name: fullName,
      labels: { [ownerLabel]: spec.ownerTenant },
      annotations: approved
        ? { [sharingAnnotations.approvedSpec]: specHash(full), [sharingAnnotations.approvedBy]: "test" }
        : {},
    },
    spec: full,
  });
  return fullName;
}

const listed = async (user: SessionUser) =>
  (await caller(user).sharedWithMe.list()).filter((grant) => grant.owner.startsWith(`sw-${runId}-`));

const inOneDay = () => new Date(Date.now() + 24 * 60 * 60 * 1000).toISOString();

beforeAll(async () => {
  conn = await setUpTenantSuite(operator);
  setSuperCluster(conn);
  setGatewayEndpoint({ gatewayUrl: "https://127.0.0.1:3443" });
  member = await signIn(grantee, "dev", "tenant-member");
  admin = await signIn(grantee, "boss", "tenant-admin");
  outsider = await signIn(third, "dev", "tenant-member");
  await createObject(conn, {
    apiVersion: tenantApiVersion,
    kind: tenantKind,
    metadata: { name: owner },
    spec: { displayName: "Acme Rockets", controlPlane: { provisioner: "local", version: "1.36" } },
  });
}, 60_000);

afterAll(async () => {
  for (const name of grantNames) {
    await deleteObject(conn, { apiVersion: sharingApiVersion, kind: sharingKind, metadata: { name } }).catch(
      () => undefined,
    );
  }
  await deleteObject(conn, {
    apiVersion: tenantApiVersion,
    kind: tenantKind,
    metadata: { name: owner },
  }).catch(() => undefined);
  setGatewayEndpoint(null);
  setSuperCluster(null);
  await disconnectDb();
});

describe("sharedWithMe", () => {
  it("shows a grantee exactly the live grants that include them, with the owner's display name only", async () => {
    const expiresAt = inOneDay();
    const whole = await createGrant("pods", {
      ownerTenant: owner,
      grantees: [{ tenant: grantee }],
      rules: [podsRead],
      expiresAt,
      purpose: "debug the checkout",
    });
    // Only the grantee tenant's admins, and only one named user: the member is neither.
    const adminsOnly = await createGrant("admins", {
      ownerTenant: owner,
      grantees: [{ tenant: grantee, groups: ["admins"] }],
      rules: [{ ...podsRead, namespaces: ["ops"] }],
      expiresAt,
    });
    await createGrant("named", {
      ownerTenant: owner,
      grantees: [{ tenant: grantee, users: ["someone-else"] }],
      rules: [podsRead],
      expiresAt,
    });
    // Not approved, and already expired: neither is live.
    await createGrant(
      "pending",
      { ownerTenant: owner, grantees: [{ tenant: grantee }], rules: [podsRead], expiresAt },
      false,
    );
    await createGrant("expired", {
      ownerTenant: owner,
      grantees: [{ tenant: grantee }],
      rules: [podsRead],
      expiresAt: new Date(Date.now() - 60_000).toISOString(),
    });
    const exec = await createGrant("exec", {
      ownerTenant: bareOwner,
      grantees: [{ tenant: grantee, users: ["dev"] }],
      rules: [
        { namespaces: ["ops"], apiGroups: [""], resources: ["pods"], verbs: ["list", "watch", "get"] },
        {
          namespaces: ["ops"],
          apiGroups: [""],
          resources: ["pods/exec"],
          verbs: ["create"],
          resourceNames: ["debug"],
        },
      ],
      expiresAt,
    });
    // Approved, but beyond the operator policy in force (secrets; no expiry where one is required):
    // the gateway would refuse them, so they are not shown either.
    await createGrant("secrets", {
      ownerTenant: owner,
      grantees: [{ tenant: grantee }],
      rules: [{ ...podsRead, resources: ["pods", "secrets"] }],
      expiresAt,
    });
    await createGrant("forever", {
      ownerTenant: bareOwner,
      grantees: [{ tenant: grantee }],
      rules: [podsRead],
    });

    const seen = await eventually(async () => {
      const grants = await listed(member);
      return grants.length === 2 ? grants : undefined;
    }, 10_000);
    expect(seen).toEqual([
      {
        owner,
        ownerDisplayName: "Acme Rockets",
        name: whole,
        shortName: "pods",
        purpose: "debug the checkout",
        expiresAt: new Date(expiresAt).toISOString(),
        rules: [
          {
            namespaces: ["shared"],
            apiGroups: [""],
            resources: ["pods", "pods/log"],
            resourceNames: [],
            verbs: ["get", "list", "watch"],
          },
        ],
        namespaces: [
          {
            namespace: "shared",
            canListPods: true,
            canReadLogs: true,
            canExec: false,
            logsLimitedTo: null,
            execLimitedTo: null,
          },
        ],
      },
      {
        owner: bareOwner,
        ownerDisplayName: bareOwner,
        name: exec,
        shortName: "exec",
        purpose: "test exec",
        expiresAt: new Date(expiresAt).toISOString(),
        rules: [
          {
            namespaces: ["ops"],
            apiGroups: [""],
            resources: ["pods"],
            resourceNames: [],
            verbs: ["list", "watch", "get"],
          },
          {
            namespaces: ["ops"],
            apiGroups: [""],
            resources: ["pods/exec"],
            resourceNames: ["debug"],
            verbs: ["create"],
          },
        ],
        namespaces: [
          {
            namespace: "ops",
            canListPods: true,
            canReadLogs: false,
            canExec: true,
            logsLimitedTo: null,
            execLimitedTo: ["debug"],
          },
        ],
      },
    ]);
    // The grantee tenant's admin gets the admins' grant, not the grant named for the member.
    expect((await listed(admin)).map((grant) => grant.name)).toEqual([adminsOnly, whole]);
    // Nothing of the owner beyond its display name: no grantees, endpoint, admins or status.
    expect(Object.keys(seen[0] ?? {}).sort()).toEqual([
      "expiresAt",
      "name",
      "namespaces",
      "owner",
      "ownerDisplayName",
      "purpose",
      "rules",
      "shortName",
    ]);
  });

  it("lets the grantee's pages open exactly the namespaces a live grant of the owner names for them", async () => {
    const names = async (user: SessionUser, from: string, namespace: string) =>
      (await grantsOfSharedNamespace(user, from, namespace))?.map((grant) => grant.metadata.name) ?? null;
    expect(await names(member, owner, "shared")).toEqual([`${owner}-pods`]);
    expect(await names(member, owner, "ops")).toBeNull();
    expect(await names(admin, owner, "ops")).toEqual([`${owner}-admins`]);
    expect(await names(member, owner, "default")).toBeNull();
    expect(await names(member, bareOwner, "ops")).toEqual([`${bareOwner}-exec`]);
    expect(await names(outsider, owner, "shared")).toBeNull();
    expect(await names(operator, owner, "shared")).toBeNull();
    expect(await names(member, "Not A Tenant", "shared")).toBeNull();
  });

  it("shows a third tenant's user and an operator nothing, and refuses them a kubeconfig as for no tenant", async () => {
    expect(await listed(outsider)).toEqual([]);
    expect(await listed(operator)).toEqual([]);
    expect(await trpcOutcome(caller(outsider).sharedWithMe.kubeconfig({ owner }))).toEqual([
      "NOT_FOUND",
      `Tenant "${owner}" was not found.`,
    ]);
    // An owner that does not exist reads the same.
    expect(
      await trpcOutcome(caller(outsider).sharedWithMe.kubeconfig({ owner: `sw-${runId}-none` })),
    ).toEqual(["NOT_FOUND", `Tenant "sw-${runId}-none" was not found.`]);
  });

  it("issues a kubeconfig with one <owner>-shared context: the owner's gateway URL, a token of the grantee's own tenant; audited under the owner", async () => {
    const issued = await caller(member).sharedWithMe.kubeconfig({ owner, expiresInDays: 30 });
    expect(issued.filename).toBe(`${owner}-shared.kubeconfig`);
    expect(issued.context).toBe(`${owner}-shared`);
    const config = load(issued.kubeconfig) as {
      clusters: { name: string; cluster: { server: string } }[];
      users: { name: string; user: { token: string } }[];
      contexts: { name: string; context: { cluster: string; user: string } }[];
      "current-context": string;
    };
    expect(config.contexts.map((context) => context.name)).toEqual([`${owner}-shared`]);
    expect(config["current-context"]).toBe(`${owner}-shared`);
    expect(config.clusters).toEqual([
      { name: `ring0-${owner}-shared`, cluster: { server: `https://127.0.0.1:3443/k8s/tenants/${owner}` } },
    ]);
    const token = config.users[0]?.user.token ?? "";
    const verified = await createTokenService({ db: getDb() }).verifyToken(token);
    expect(verified?.token.tenant).toBe(grantee);
    expect(verified?.user.subject).toBe(member.subject);
    // Never longer than the grant (one day), whatever was asked.
    expect((verified?.token.expiresAt.getTime() ?? 0) - Date.now()).toBeLessThanOrEqual(
      24 * 60 * 60 * 1000 + 60_000,
    );

    const events = await getDb().auditEvent.findMany({
      where: { tenant: owner, action: "share.kubeconfig" },
    });
    expect(events.map((event) => [event.actorName, event.actorTenant, event.target, event.result])).toEqual([
      [member.name, grantee, `${owner}-pods`, "success"],
    ]);
    expect(JSON.stringify(events[0]?.detail)).not.toContain(token);
  });

  it("drops an expiring grant the moment it expires, with no change to the object", async () => {
    const soon = await createGrant("soon", {
      ownerTenant: bareOwner,
      grantees: [{ tenant: grantee }],
      rules: [{ ...podsRead, namespaces: ["soon"] }],
      expiresAt: new Date(Date.now() + 3_000).toISOString(),
    });
    await eventually(
      async () => ((await listed(member)).some((grant) => grant.name === soon) ? true : undefined),
      5_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    expect((await listed(member)).map((grant) => grant.name)).not.toContain(soon);
  });

  it("drops a revoked grant at once, and then refuses its kubeconfig", async () => {
    await kubeRequest(conn, {
      method: "PATCH",
      path: `/apis/${sharingApiVersion}/sharingpolicies/${owner}-pods`,
      contentType: "application/merge-patch+json",
      body: {
        metadata: {
          annotations: {
            [sharingAnnotations.revokedAt]: new Date().toISOString(),
            [sharingAnnotations.revokedBy]: "acme:acme-admin",
          },
        },
      },
    });
    await eventually(
      async () => ((await listed(member)).every((grant) => grant.owner !== owner) ? true : undefined),
      5_000,
    );
    expect(await trpcOutcome(caller(member).sharedWithMe.kubeconfig({ owner }))).toEqual([
      "NOT_FOUND",
      `Tenant "${owner}" was not found.`,
    ]);
    // The grant the admin holds is another one: still theirs.
    expect((await listed(admin)).map((grant) => grant.name)).toEqual([`${owner}-admins`]);
  });
});
