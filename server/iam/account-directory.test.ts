import { beforeAll, describe, expect, it } from "vitest";
import {
  type AccountStore,
  createAccountDirectory,
  createAccountStore,
  hashPassword,
  parseLogin,
  type StoredAccountSource,
} from "./accounts";

const cheap = { N: 1024, r: 8, p: 1 };

interface Row {
  tenant: string;
  username: string;
  name: string;
  email: string;
  passwordHash: string;
  disabled: boolean;
}

/** The database's accounts as an in-memory fake. */
function fakeStore(rows: Row[]): StoredAccountSource {
  return {
    findByUsername: async (username) => rows.filter((row) => row.username === username),
    find: async (tenant, username) => rows.find((row) => row.tenant === tenant && row.username === username),
  };
}

let seed: AccountStore;
let rows: Row[];

beforeAll(async () => {
  seed = await createAccountStore([
    {
      username: "acme-admin",
      tenant: "acme",
      name: "Alice",
      email: "alice@acme.example",
      roles: ["tenant-admin"],
      passwordHash: await hashPassword("seed-password", cheap),
    },
  ]);
  const row = async (tenant: string, username: string, password: string, disabled = false): Promise<Row> => ({
    tenant,
    username,
    name: `${username} of ${tenant}`,
    email: `${username}@${tenant}.example`,
    passwordHash: await hashPassword(password, cheap),
    disabled,
  });
  rows = [
    await row("acme", "carol", "carol-password"),
    await row("acme", "dave", "dave-password", true),
    await row("acme", "twin", "twin-acme"),
    await row("globex", "twin", "twin-globex"),
  ];
});

describe("parseLogin", () => {
  it("splits tenant:username and normalises", () => {
    expect(parseLogin(" Acme:Carol ")).toEqual({ tenant: "acme", username: "carol" });
    expect(parseLogin("carol")).toEqual({ username: "carol" });
  });
});

describe("the embedded IAM's account directory", () => {
  it("signs in seed and database accounts; database accounts carry no role claims", async () => {
    const directory = createAccountDirectory(seed, fakeStore(rows));
    const seeded = await directory.authenticate("acme-admin", "seed-password");
    expect(seeded.ok && seeded.account.sub).toBe("acme:acme-admin");
    const stored = await directory.authenticate("carol", "carol-password");
    expect(stored).toMatchObject({ ok: true, account: { sub: "acme:carol", roles: [] } });
    expect(await directory.authenticate("acme:carol", "carol-password")).toMatchObject({ ok: true });
    expect(await directory.authenticate("globex:carol", "carol-password")).toEqual({
      ok: false,
      reason: "invalid",
    });
    expect(await directory.authenticate("globex:acme-admin", "seed-password")).toEqual({
      ok: false,
      reason: "invalid",
    });
  });

  it("reports a disabled account only after the right password", async () => {
    const directory = createAccountDirectory(seed, fakeStore(rows));
    expect(await directory.authenticate("dave", "wrong")).toEqual({ ok: false, reason: "invalid" });
    expect(await directory.authenticate("dave", "dave-password")).toEqual({ ok: false, reason: "disabled" });
    expect(await directory.findBySub("acme:dave")).toBeUndefined();
    expect((await directory.findBySub("acme:carol"))?.email).toBe("carol@acme.example");
  });

  it("asks for tenant:username when a username exists in several tenants", async () => {
    const directory = createAccountDirectory(seed, fakeStore(rows));
    expect(await directory.authenticate("twin", "twin-acme")).toEqual({ ok: false, reason: "ambiguous" });
    expect(await directory.authenticate("globex:twin", "twin-globex")).toMatchObject({
      ok: true,
      account: { sub: "globex:twin" },
    });
  });

  it("without a database knows the seed accounts only", async () => {
    const directory = createAccountDirectory(seed, undefined);
    expect(await directory.authenticate("carol", "carol-password")).toEqual({ ok: false, reason: "invalid" });
    expect(await directory.findBySub("acme:carol")).toBeUndefined();
    expect(await directory.findBySub("acme:acme-admin")).toBeDefined();
  });
});
