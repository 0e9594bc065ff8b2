/**
 * tenants.create with a first admin account: the account and its admin membership are made right
 * after the Tenant object, the one-time password comes back once, and an external IAM or a taken
 * username refuses before any Tenant exists. Real PostgreSQL and the local super cluster.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { disconnectDb, getDb } from "@/server/db/client";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { deleteTenantResource, listTenantResources } from "@/server/tenants/tenant-resources";
import { createUserRepository } from "@/server/users/repository";
import { setUpTenantSuite } from "@/test/integration/tenant-suite";
import { testCaller, testOperator, trpcOutcome } from "@/test/integration/trpc";
import { registerEmbeddedIam } from "./registry";

const operator = testOperator();
const stamp = Date.now().toString(36);
const created = `fa-${stamp}`;
const refused = `fb-${stamp}`;
const savedIssuer = process.env.OIDC_ISSUER;
let conn: ClusterConnection;

const seedAccount = {
  sub: "acme:acme-admin",
  username: "acme-admin",
  tenant: "acme",
  name: "Alice",
  email: "alice@acme.example",
  roles: ["tenant-admin"],
};

beforeAll(async () => {
  delete process.env.OIDC_ISSUER;
  conn = await setUpTenantSuite(operator);
}, 60_000);

afterEach(() => {
  setSuperCluster(null);
  registerEmbeddedIam(null);
});

afterAll(async () => {
  setSuperCluster(conn);
  await deleteTenantResource(created).catch(() => undefined);
  await deleteTenantResource(refused).catch(() => undefined);
  setSuperCluster(null);
  await getDb().iamAccount.deleteMany({ where: { tenant: { in: [created, refused] } } });
  await getDb().user.deleteMany({ where: { tenant: { in: [created, refused] } } });
  if (savedIssuer !== undefined) process.env.OIDC_ISSUER = savedIssuer;
  await disconnectDb();
});

const input = (name: string, username: string) => ({
  name,
  displayName: "First admin test",
  version: "1.36" as const,
  firstAdmin: { username, name: "First Admin", email: `first@${name}.example` },
});

describe("tenants.create with a first admin account", () => {
  it("creates the account as the tenant's admin and returns its one-time password", async () => {
    setSuperCluster(conn);
    registerEmbeddedIam({ issuer: "http://iam.test", seedAccounts: [seedAccount] });
    const result = await testCaller(operator, getDb()).tenants.create(input(created, "first"));
    expect(result).toMatchObject({ name: created, firstAdmin: { username: "first" } });
    expect(result.firstAdmin?.temporaryPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);

    const members = await createUserRepository(getDb()).members(created);
    expect(members).toEqual([
      expect.objectContaining({ subject: `${created}:first`, role: "tenant-admin", roleSource: "ring0" }),
    ]);
    const account = await getDb().iamAccount.findUniqueOrThrow({
      where: { tenant_username: { tenant: created, username: "first" } },
    });
    expect(account.createdBy).toBe("Olivia");
    const events = await getDb().auditEvent.findMany({ where: { tenant: created } });
    expect(events.map((event) => event.action)).toEqual(
      expect.arrayContaining(["tenant.create", "account.create"]),
    );
    expect(JSON.stringify(events)).not.toContain(result.firstAdmin?.temporaryPassword);
  });

  it("refuses before creating the Tenant with an external IAM or a built-in username", async () => {
    setSuperCluster(conn);
    const [code, message] = await trpcOutcome(
      testCaller(operator, getDb()).tenants.create(input(refused, "first")),
    );
    expect(code).toBe("FORBIDDEN");
    expect(message).toMatch(/managed in your identity provider/);

    registerEmbeddedIam({ issuer: "http://iam.test", seedAccounts: [seedAccount] });
    const [taken] = await trpcOutcome(
      testCaller(operator, getDb()).tenants.create(input(refused, "acme-admin")),
    );
    expect(taken).toBe("CONFLICT");
    const [badName, badMessage] = await trpcOutcome(
      testCaller(operator, getDb()).tenants.create(input(refused, "No")),
    );
    expect(badName).toBe("BAD_REQUEST");
    expect(badMessage).toMatch(/firstAdmin\.username: expected at least 3 characters/);
    expect((await listTenantResources()).map((tenant) => tenant.name)).not.toContain(refused);
  });
});
