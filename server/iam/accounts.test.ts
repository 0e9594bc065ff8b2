import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AccountEntry,
  AccountsFileError,
  createAccountStore,
  hashPassword,
  loadAccountStore,
  parseAccountsFile,
  parsePasswordHash,
  readAccountsFile,
  verifyPassword,
} from "./accounts";

const seedFile = path.join(import.meta.dirname, "seed-accounts.json");
const cheap = { N: 1024, r: 8, p: 1 };

function entry(overrides: Record<string, unknown> = {}) {
  return {
    username: "acme-admin",
    tenant: "acme",
    name: "Alice Admin (Acme)",
    email: "alice@acme.example",
    roles: ["tenant-admin"],
    password: "ring0-demo",
    ...overrides,
  };
}

function errorOf(data: unknown): AccountsFileError {
  try {
    parseAccountsFile(data, "test file");
  } catch (error) {
    expect(error).toBeInstanceOf(AccountsFileError);
    return error as AccountsFileError;
  }
  throw new Error("expected the file to be rejected");
}

describe("hashPassword / verifyPassword", () => {
  it("produces salted scrypt$N$r$p$salt$hash strings", async () => {
    const first = await hashPassword("correct horse");
    const second = await hashPassword("correct horse");
    expect(first).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(second).not.toBe(first);
    expect(first).not.toContain("correct horse");
  });

  it("verifies the right password and rejects others", async () => {
    const stored = await hashPassword("s3cret-pass", cheap);
    expect(await verifyPassword("s3cret-pass", stored)).toBe(true);
    expect(await verifyPassword("s3cret-pasS", stored)).toBe(false);
    expect(await verifyPassword("", stored)).toBe(false);
  });

  it("treats malformed or out-of-range hashes as non-matching", async () => {
    const stored = await hashPassword("pw-pw-pw-pw", cheap);
    const [, , r, p, salt, hash] = stored.split("$");
    expect(await verifyPassword("pw-pw-pw-pw", "plain-text")).toBe(false);
    expect(await verifyPassword("pw-pw-pw-pw", `bcrypt$1024$${r}$${p}$${salt}$${hash}`)).toBe(false);
    expect(parsePasswordHash(`scrypt$${2 ** 21}$${r}$${p}$${salt}$${hash}`)).toBeUndefined();
    expect(parsePasswordHash(`scrypt$1000$${r}$${p}$${salt}$${hash}`)).toBeUndefined();
    expect(parsePasswordHash(`scrypt$1024$${r}$${p}$${salt}$AAAA`)).toBeUndefined();
    expect(parsePasswordHash(stored)).toMatchObject({ N: 1024, r: 8, p: 1 });
  });
});

describe("seed accounts file", () => {
  it("holds the operator and an admin and a member in acme and globex", async () => {
    const entries = await readAccountsFile(seedFile);
    expect(entries.map((account) => [account.username, account.tenant, account.roles])).toEqual([
      ["operator", "system", ["operator"]],
      ["acme-admin", "acme", ["tenant-admin"]],
      ["acme-member", "acme", ["tenant-member"]],
      ["globex-admin", "globex", ["tenant-admin"]],
      ["globex-member", "globex", ["tenant-member"]],
    ]);
    for (const account of entries) expect(account.password).toBe("ring0-demo");
  });
});

describe("account store", () => {
  let store: Awaited<ReturnType<typeof loadAccountStore>>;

  beforeAll(async () => {
    store = await loadAccountStore(seedFile);
  });

  it("uses <tenant>:<username> as the subject and keeps no passwords", () => {
    expect(store.size).toBe(5);
    expect(store.findBySub("acme:acme-admin")).toMatchObject({
      username: "acme-admin",
      tenant: "acme",
      name: "Alice Admin (Acme)",
      email: "alice@acme.example",
      roles: ["tenant-admin"],
    });
    expect(store.findByUsername("Globex-Member")?.sub).toBe("globex:globex-member");
    expect(store.findBySub("acme-admin")).toBeUndefined();
    const exposed = JSON.stringify(store.list());
    expect(exposed).not.toContain("ring0-demo");
    expect(exposed).not.toContain("scrypt$");
  });

  it("authenticates with the right password only", async () => {
    expect((await store.authenticate("operator", "ring0-demo"))?.sub).toBe("system:operator");
    expect((await store.authenticate("  ACME-Member ", "ring0-demo"))?.sub).toBe("acme:acme-member");
    expect(await store.authenticate("operator", "ring0-demo ")).toBeUndefined();
    expect(await store.authenticate("nobody", "ring0-demo")).toBeUndefined();
    expect(await store.authenticate("", "")).toBeUndefined();
  });

  it("accepts passwordHash entries", async () => {
    const passwordHash = await hashPassword("shipped-password", cheap);
    const entries: AccountEntry[] = parseAccountsFile({
      accounts: [entry({ password: undefined, passwordHash })],
    });
    const custom = await createAccountStore(entries);
    expect((await custom.authenticate("acme-admin", "shipped-password"))?.tenant).toBe("acme");
    expect(await custom.authenticate("acme-admin", "ring0-demo")).toBeUndefined();
  });
});

describe("accounts file validation", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "ring0-accounts-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("names the entry and field of a bad value", () => {
    const error = errorOf({ accounts: [entry({ username: "operator" }), entry({ email: "not-an-email" })] });
    expect(error.message).toContain('Invalid test file: accounts[1] ("acme-admin") field "email"');
    expect(error.problems).toHaveLength(1);
  });

  it("reports missing fields", () => {
    const { tenant: _tenant, ...withoutTenant } = entry();
    const error = errorOf({ accounts: [withoutTenant] });
    expect(error.message).toContain('accounts[0] ("acme-admin") field "tenant"');
  });

  it("requires exactly one of password and passwordHash", async () => {
    const neither = errorOf({ accounts: [entry({ password: undefined })] });
    expect(neither.message).toContain('field "password": expected exactly one of password or passwordHash');
    const passwordHash = await hashPassword("x-x-x-x-x", cheap);
    const both = errorOf({ accounts: [entry({ passwordHash })] });
    expect(both.message).toContain("expected exactly one of password or passwordHash");
  });

  it("rejects malformed hashes, bad names, unknown keys and duplicates", () => {
    expect(
      errorOf({ accounts: [entry({ password: undefined, passwordHash: "md5$abc" })] }).message,
    ).toContain('field "passwordHash": expected scrypt$N$r$p$salt$hash');
    expect(errorOf({ accounts: [entry({ tenant: "Acme Corp" })] }).message).toContain('field "tenant"');
    expect(errorOf({ accounts: [entry({ roles: [] })] }).message).toContain('field "roles"');
    expect(errorOf({ accounts: [entry({ admin: true })] }).message).toMatch(
      /accounts\[0\] \("acme-admin"\).*"admin"/,
    );
    const duplicate = errorOf({ accounts: [entry(), entry({ email: "other@acme.example" })] });
    expect(duplicate.message).toContain('accounts[1] ("acme-admin") field "username": duplicate username');
    expect(errorOf({ users: [] }).message).toContain('field "accounts"');
  });

  it("explains unreadable and non-JSON files", async () => {
    const broken = path.join(dir, "broken.json");
    await writeFile(broken, "{ not json");
    await expect(readAccountsFile(broken)).rejects.toThrow(/not valid JSON/);
    await expect(readAccountsFile(path.join(dir, "missing.json"))).rejects.toThrow(
      /Cannot read accounts file/,
    );
  });
});
