/**
 * The embedded IAM's tenant-user account store: a JSON file validated with zod, plain passwords
 * hashed with scrypt on load (never kept), verification in constant time and with the same work
 * for unknown usernames so response times do not reveal which logins exist.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { z } from "zod";

/** scrypt cost parameters for new hashes (32 MiB, roughly 50-100 ms per hash). */
export const SCRYPT_DEFAULTS = { N: 2 ** 15, r: 8, p: 1, saltBytes: 16, keyBytes: 32 } as const;

/** Bounds accepted when reading a stored hash, so a hostile file cannot make login unbounded work. */
const LIMITS = { maxN: 2 ** 20, minN: 2 ** 10, maxR: 32, maxP: 16, minBytes: 16, maxBytes: 128 } as const;

const b64url = /^[A-Za-z0-9_-]+$/;

interface ScryptParams {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

function scrypt(password: string, salt: Buffer, keyLength: number, N: number, r: number, p: number) {
  // Node's default maxmem (32 MiB) is exactly 128 * N * r for N = 2^15, r = 8, so raise it explicitly.
  const maxmem = 128 * N * r * p + 128 * N * r * 2 + 1024 * 1024;
  return new Promise<Buffer>((resolve, reject) => {
    scryptCallback(password.normalize("NFKC"), salt, keyLength, { N, r, p, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** Parses `scrypt$N$r$p$salt$hash` (salt and hash base64url); undefined when malformed or out of bounds. */
export function parsePasswordHash(encoded: string): ScryptParams | undefined {
  const parts = encoded.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return undefined;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  if (![n, r, p].every((value) => /^[1-9][0-9]{0,7}$/.test(value))) return undefined;
  if (!b64url.test(salt) || !b64url.test(hash)) return undefined;
  const params = {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    salt: Buffer.from(salt, "base64url"),
    hash: Buffer.from(hash, "base64url"),
  };
  const powerOfTwo = (params.N & (params.N - 1)) === 0;
  if (!powerOfTwo || params.N < LIMITS.minN || params.N > LIMITS.maxN) return undefined;
  if (params.r > LIMITS.maxR || params.p > LIMITS.maxP) return undefined;
  for (const buffer of [params.salt, params.hash]) {
    if (buffer.length < LIMITS.minBytes || buffer.length > LIMITS.maxBytes) return undefined;
  }
  return params;
}

/** Hashes a password as `scrypt$N$r$p$salt$hash` with a fresh random salt. */
export async function hashPassword(
  password: string,
  options: { N?: number; r?: number; p?: number } = {},
): Promise<string> {
  const { N = SCRYPT_DEFAULTS.N, r = SCRYPT_DEFAULTS.r, p = SCRYPT_DEFAULTS.p } = options;
  const salt = randomBytes(SCRYPT_DEFAULTS.saltBytes);
  const hash = await scrypt(password, salt, SCRYPT_DEFAULTS.keyBytes, N, r, p);
  const encoded = `scrypt$${N}$${r}$${p}$${salt.toString("base64url")}$${hash.toString("base64url")}`;
  if (!parsePasswordHash(encoded)) throw new RangeError("scrypt parameters out of the accepted range");
  return encoded;
}

/** Checks a password against a stored hash in constant time; false for malformed hashes. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const params = parsePasswordHash(encoded);
  if (!params) return false;
  const derived = await scrypt(password, params.salt, params.hash.length, params.N, params.r, params.p);
  return derived.length === params.hash.length && timingSafeEqual(derived, params.hash);
}

const usernamePattern = /^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$/;
const tenantPattern = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
const rolePattern = /^[a-z][a-z0-9:_-]{0,62}$/;

export const accountEntrySchema = z
  .strictObject({
    username: z
      .string()
      .regex(
        usernamePattern,
        "expected a lowercase login name (a-z, 0-9, '.', '_', '-'; at most 64 characters)",
      ),
    tenant: z.string().regex(tenantPattern, "expected a tenant name (lowercase DNS label)"),
    name: z.string().trim().min(1, "expected a display name").max(200, "expected at most 200 characters"),
    email: z.email("expected an email address"),
    roles: z
      .array(z.string().regex(rolePattern, "expected a lowercase role name such as tenant-admin"))
      .min(1, "expected at least one role"),
    password: z
      .string()
      .min(8, "expected at least 8 characters")
      .max(1024, "expected at most 1024 characters")
      .optional(),
    passwordHash: z
      .string()
      .refine(
        (value) => parsePasswordHash(value) !== undefined,
        "expected scrypt$N$r$p$salt$hash (base64url)",
      )
      .optional(),
  })
  .superRefine((entry, ctx) => {
    if ((entry.password === undefined) === (entry.passwordHash === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["password"],
        message: "expected exactly one of password or passwordHash",
      });
    }
  });

export const accountsFileSchema = z
  .looseObject({ accounts: z.array(accountEntrySchema) })
  .superRefine((file, ctx) => {
    const usernames = new Map<string, number>();
    const emails = new Map<string, number>();
    file.accounts.forEach((entry, index) => {
      const previous = usernames.get(entry.username);
      if (previous !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["accounts", index, "username"],
          message: `duplicate username (also used by accounts[${previous}])`,
        });
      } else usernames.set(entry.username, index);
      const email = entry.email.toLowerCase();
      const previousEmail = emails.get(email);
      if (previousEmail !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["accounts", index, "email"],
          message: `duplicate email (also used by accounts[${previousEmail}])`,
        });
      } else emails.set(email, index);
    });
  });

/** One validated entry of the accounts file (may still hold a plain password until hashed). */
export type AccountEntry = z.infer<typeof accountEntrySchema>;

export class AccountsFileError extends Error {
  override name = "AccountsFileError";
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(message);
  }
}

function describePath(data: unknown, path: readonly PropertyKey[]): string {
  if (path[0] !== "accounts" || typeof path[1] !== "number") {
    return path.length ? `field "${path.map(String).join(".")}"` : "the file";
  }
  const index = path[1];
  const raw = (data as { accounts?: unknown[] }).accounts?.[index];
  const username =
    raw && typeof raw === "object" && typeof (raw as { username?: unknown }).username === "string"
      ? ` ("${(raw as { username: string }).username}")`
      : "";
  const field = path.slice(2).map(String).join(".");
  return `accounts[${index}]${username}${field ? ` field "${field}"` : ""}`;
}

/** Validates parsed JSON; throws AccountsFileError naming each bad entry and field. */
export function parseAccountsFile(data: unknown, source = "accounts file"): AccountEntry[] {
  const result = accountsFileSchema.safeParse(data);
  if (result.success) return result.data.accounts;
  const problems = result.error.issues.map((issue) => {
    const keys =
      issue.code === "unrecognized_keys" ? ` (${issue.keys.map((key) => `"${key}"`).join(", ")})` : "";
    return `${describePath(data, issue.path)}: ${issue.message}${keys}`;
  });
  throw new AccountsFileError(`Invalid ${source}: ${problems.join("; ")}`, problems);
}

/** Reads and validates an accounts file. */
export async function readAccountsFile(file: string): Promise<AccountEntry[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (cause) {
    throw new AccountsFileError(`Cannot read accounts file ${file}: ${(cause as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (cause) {
    throw new AccountsFileError(
      `Invalid accounts file ${file}: not valid JSON (${(cause as Error).message})`,
    );
  }
  return parseAccountsFile(data, `accounts file ${file}`);
}

/** A tenant user as the IAM exposes it; never carries a password. */
export interface TenantAccount {
  /** `<tenant>:<username>`, the OIDC subject. */
  readonly sub: string;
  readonly username: string;
  readonly tenant: string;
  readonly name: string;
  readonly email: string;
  readonly roles: readonly string[];
}

export interface AccountStore {
  readonly size: number;
  list(): TenantAccount[];
  findBySub(sub: string): TenantAccount | undefined;
  findByUsername(username: string): TenantAccount | undefined;
  /** The account when the password matches; undefined otherwise (same work whether or not the user exists). */
  authenticate(username: string, password: string): Promise<TenantAccount | undefined>;
}

export function subjectFor(tenant: string, username: string): string {
  return `${tenant}:${username}`;
}

/** How login input is compared with stored usernames. */
export function normaliseUsername(username: string): string {
  return username.normalize("NFKC").trim().toLowerCase();
}

/**
 * Builds the store, hashing plain passwords; the entries' plain passwords are kept only until
 * their hash is made. Hashing runs in the background (libuv's threads) beside the rest of Ring0's
 * start, not before it; a login waits for its account's hash.
 */
export async function createAccountStore(entries: readonly AccountEntry[]): Promise<AccountStore> {
  const inBackground = (hash: Promise<string>) => {
    // A failed hash fails the logins that need it, not the process.
    hash.catch(() => {});
    return hash;
  };
  // Unknown usernames are checked against this so they cost the same as a wrong password.
  const dummyHash = inBackground(hashPassword(randomBytes(24).toString("base64url")));
  const records = await Promise.all(
    entries.map(async (entry) => {
      const account: TenantAccount = Object.freeze({
        sub: subjectFor(entry.tenant, entry.username),
        username: entry.username,
        tenant: entry.tenant,
        name: entry.name,
        email: entry.email,
        roles: Object.freeze([...entry.roles]),
      });
      const passwordHash =
        entry.passwordHash !== undefined
          ? Promise.resolve(entry.passwordHash)
          : inBackground(hashPassword(entry.password ?? ""));
      return { account, passwordHash };
    }),
  );
  const byUsername = new Map(records.map((record) => [record.account.username, record]));
  const bySub = new Map(records.map((record) => [record.account.sub, record.account]));
  // Every login waits until every hash is made, so none answers sooner for being unknown.
  const allHashed = Promise.all([dummyHash, ...records.map((record) => record.passwordHash)]);
  allHashed.catch(() => {});

  return {
    size: records.length,
    list: () => records.map((record) => record.account),
    findBySub: (sub) => bySub.get(sub),
    findByUsername: (username) => byUsername.get(normaliseUsername(username))?.account,
    async authenticate(username, password) {
      const record = byUsername.get(normaliseUsername(username));
      await allHashed;
      const ok = await verifyPassword(password, await (record?.passwordHash ?? dummyHash));
      return ok && record ? record.account : undefined;
    },
  };
}

/** Reads, validates and loads an accounts file into a store. */
export async function loadAccountStore(file: string): Promise<AccountStore> {
  return createAccountStore(await readAccountsFile(file));
}

/** The subset of the database account directory the login needs (server/iam/account-repository.ts). */
export interface StoredAccountSource {
  findByUsername(username: string): Promise<StoredAccountLike[]>;
  find(tenant: string, username: string): Promise<StoredAccountLike | undefined>;
}

interface StoredAccountLike {
  tenant: string;
  username: string;
  name: string;
  email: string;
  passwordHash: string;
  disabled: boolean;
}

export type LoginResult =
  | { ok: true; account: TenantAccount }
  | {
      ok: false;
      /** invalid: wrong login or password; disabled: right password, disabled account; ambiguous: the username exists in several tenants. */
      reason: "invalid" | "disabled" | "ambiguous";
    };

function storedToTenantAccount(stored: StoredAccountLike): TenantAccount {
  // Roles of database accounts live in Ring0's memberships (Ring0-managed), not in IAM claims.
  return Object.freeze({
    sub: subjectFor(stored.tenant, stored.username),
    username: stored.username,
    tenant: stored.tenant,
    name: stored.name,
    email: stored.email,
    roles: Object.freeze([]),
  });
}

/** `acme:alice` → tenant and username; a plain `alice` has no tenant. */
export function parseLogin(login: string): { tenant?: string; username: string } {
  const normalised = normaliseUsername(login);
  const colon = normalised.indexOf(":");
  if (colon < 0) return { username: normalised };
  return { tenant: normalised.slice(0, colon), username: normalised.slice(colon + 1) };
}

/**
 * The embedded IAM's accounts: the seed file's and, when a database is configured, the ones tenant
 * admins created. A login is a username, or `<tenant>:<username>` when that username exists in
 * several tenants. Disabled accounts are reported only after a correct password, so the message
 * does not reveal which accounts exist.
 */
export function createAccountDirectory(seed: AccountStore, stored: StoredAccountSource | undefined) {
  return {
    async findBySub(sub: string): Promise<TenantAccount | undefined> {
      const seeded = seed.findBySub(sub);
      if (seeded || !stored) return seeded;
      const { tenant, username } = parseLogin(sub);
      if (!tenant) return undefined;
      const found = await stored.find(tenant, username);
      return found && !found.disabled ? storedToTenantAccount(found) : undefined;
    },

    async authenticate(login: string, password: string): Promise<LoginResult> {
      const { tenant, username } = parseLogin(login);
      const seeded = seed.findByUsername(username);
      const seedCandidate = seeded && (tenant === undefined || seeded.tenant === tenant) ? seeded : undefined;
      let candidates: StoredAccountLike[] = [];
      if (stored && username) {
        if (tenant !== undefined) {
          const found = await stored.find(tenant, username);
          candidates = found ? [found] : [];
        } else candidates = await stored.findByUsername(username);
      }
      if (candidates.length + (seedCandidate ? 1 : 0) > 1) return { ok: false, reason: "ambiguous" };
      const candidate = candidates[0];
      if (!candidate) {
        // The seed store does the same work for unknown usernames as for a wrong password.
        const account = await seed.authenticate(username, password);
        return account && seedCandidate ? { ok: true, account } : { ok: false, reason: "invalid" };
      }
      if (!(await verifyPassword(password, candidate.passwordHash))) return { ok: false, reason: "invalid" };
      if (candidate.disabled) return { ok: false, reason: "disabled" };
      return { ok: true, account: storedToTenantAccount(candidate) };
    },
  };
}

export type AccountDirectory = ReturnType<typeof createAccountDirectory>;
