/**
 * The embedded IAM's state directory: its signing keys, its cookie keys and the oidc-provider
 * artifacts (sessions, grants, tokens), each in a file of mode 0600, so a restart changes nothing.
 */
import { generateKeyPair, hash, randomBytes } from "node:crypto";
import { chmod, readFile, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Adapter, AdapterPayload, JWKS } from "oidc-provider";
import type { Logger } from "@/server/logger";

const STORE_FILE = "oidc-store.json";
const JWKS_FILE = "jwks.json";
const COOKIE_KEYS_FILE = "cookie-keys.json";

async function writePrivateFile(file: string, content: string, flag: "w" | "wx" = "w"): Promise<void> {
  await writeFile(file, content, { mode: 0o600, flag });
  await chmod(file, 0o600);
}

/** Reads a JSON state file, creating it with `create()` on first start; tightens loose permissions. */
async function loadOrCreateState<T>(
  file: string,
  create: () => Promise<T>,
  valid: (value: unknown) => value is T,
  logger: Logger,
): Promise<T> {
  try {
    const info = await stat(file);
    if ((info.mode & 0o077) !== 0) {
      logger.warn("embedded IAM state file was readable by others; restricting it to mode 0600", { file });
      await chmod(file, 0o600);
    }
    const value: unknown = JSON.parse(await readFile(file, "utf8"));
    if (!valid(value)) throw new Error(`${file} is not in the expected format; delete it to regenerate`);
    return value;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const value = await create();
  try {
    await writePrivateFile(file, `${JSON.stringify(value, null, 2)}\n`, "wx");
  } catch (error) {
    // Another process created it first: use theirs so both agree.
    if ((error as NodeJS.ErrnoException).code === "EEXIST")
      return loadOrCreateState(file, create, valid, logger);
    throw error;
  }
  logger.info("embedded IAM generated new state", { file: path.basename(file) });
  return value;
}

async function createSigningKeys(): Promise<JWKS> {
  const { privateKey } = await new Promise<{ privateKey: import("node:crypto").KeyObject }>(
    (resolve, reject) => {
      generateKeyPair("rsa", { modulusLength: 2048 }, (error, _publicKey, key) =>
        error ? reject(error) : resolve({ privateKey: key }),
      );
    },
  );
  const jwk = privateKey.export({ format: "jwk" });
  const kid = hash("sha256", JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }), "base64url");
  return { keys: [{ ...jwk, kid, alg: "RS256", use: "sig" }] } as JWKS;
}

function isJwks(value: unknown): value is JWKS {
  const keys = (value as { keys?: unknown })?.keys;
  return Array.isArray(keys) && keys.length > 0 && keys.every((key) => typeof key?.kty === "string" && key.d);
}

function isCookieKeys(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((key) => typeof key === "string" && key.length >= 32)
  );
}

/** The RS256 signing keys, generated on first start. */
export function loadSigningKeys(stateDir: string, logger: Logger): Promise<JWKS> {
  return loadOrCreateState(path.join(stateDir, JWKS_FILE), createSigningKeys, isJwks, logger);
}

/** The keys that sign the IAM's cookies, generated on first start. */
export function loadCookieKeys(stateDir: string, logger: Logger): Promise<string[]> {
  return loadOrCreateState(
    path.join(stateDir, COOKIE_KEYS_FILE),
    async () => [randomBytes(32).toString("base64url")],
    isCookieKeys,
    logger,
  );
}

// ---------------------------------------------------------------------------------------------
// Adapter: an in-memory store written through to one JSON file (atomic rename, mode 0600).

interface StoredEntry {
  payload: AdapterPayload;
  /** Epoch milliseconds; absent means no expiry. */
  expiresAt?: number;
}

const grantableModels = new Set([
  "AccessToken",
  "AuthorizationCode",
  "RefreshToken",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
  "PreAuthorizedCode",
]);

export class FileStore {
  private readonly entries = new Map<string, StoredEntry>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string,
    private readonly logger: Logger,
  ) {}

  static async open(file: string, logger: Logger): Promise<FileStore> {
    const store = new FileStore(file, logger);
    try {
      const info = await stat(file);
      if ((info.mode & 0o077) !== 0) await chmod(file, 0o600);
      const data = JSON.parse(await readFile(file, "utf8")) as { entries?: [string, StoredEntry][] };
      const now = Date.now();
      for (const [key, entry] of data.entries ?? []) {
        if (entry?.payload && (entry.expiresAt === undefined || entry.expiresAt > now))
          store.entries.set(key, entry);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        logger.warn("embedded IAM could not read its session store; starting with an empty one", {
          file,
          error,
        });
      }
    }
    return store;
  }

  get(key: string): AdapterPayload | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      this.delete(key);
      return undefined;
    }
    return structuredClone(entry.payload);
  }

  set(key: string, payload: AdapterPayload, expiresAt?: number): void {
    this.entries.set(key, { payload: structuredClone(payload), expiresAt });
    this.schedule();
  }

  update(key: string, change: (payload: AdapterPayload) => void): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    change(entry.payload);
    this.schedule();
  }

  delete(key: string): void {
    if (this.entries.delete(key)) this.schedule();
  }

  *scan(prefix: string): Generator<[string, AdapterPayload]> {
    const now = Date.now();
    for (const [key, entry] of this.entries) {
      if (!key.startsWith(prefix)) continue;
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) continue;
      yield [key, entry.payload];
    }
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, 20);
    this.timer.unref();
  }

  /** Writes the current state; writes are serialised and each one is atomic. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.writing = this.writing.then(async () => {
      const now = Date.now();
      const entries = [...this.entries].filter(
        ([, entry]) => entry.expiresAt === undefined || entry.expiresAt > now,
      );
      const temporary = `${this.file}.${process.pid}.tmp`;
      try {
        await writePrivateFile(temporary, JSON.stringify({ version: 1, entries }));
        await rename(temporary, this.file);
      } catch (error) {
        this.logger.error("embedded IAM could not persist its session store", { file: this.file, error });
      }
    });
    return this.writing;
  }

  adapterFactory(clockToleranceSeconds: number): (model: string) => Adapter {
    return (model) => {
      const key = (id: string) => `${model}:${id}`;
      const findBy = (field: "uid" | "userCode", value: string) => {
        for (const [, payload] of this.scan(`${model}:`)) {
          if (payload[field] === value) return structuredClone(payload);
        }
        return undefined;
      };
      return {
        upsert: async (id, payload, expiresIn) => {
          const expiresAt =
            typeof expiresIn === "number"
              ? Date.now() + (expiresIn + clockToleranceSeconds) * 1000
              : undefined;
          this.set(key(id), payload, expiresAt);
        },
        find: async (id) => this.get(key(id)),
        findByUid: async (uid) => findBy("uid", uid),
        findByUserCode: async (userCode) => findBy("userCode", userCode),
        consume: async (id) => {
          this.update(key(id), (payload) => {
            payload.consumed = Math.floor(Date.now() / 1000);
          });
        },
        destroy: async (id) => this.delete(key(id)),
        revokeByGrantId: async (grantId) => {
          for (const grantable of grantableModels) {
            for (const [entryKey, payload] of [...this.scan(`${grantable}:`)]) {
              if (payload.grantId === grantId) this.delete(entryKey);
            }
          }
        },
      };
    };
  }
}

/** The artifact store of `stateDir`, with what survived of the last run. */
export function openFileStore(stateDir: string, logger: Logger): Promise<FileStore> {
  return FileStore.open(path.join(stateDir, STORE_FILE), logger);
}
