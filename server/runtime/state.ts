import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * Ring0's state directory: embedded PostgreSQL data, IAM keys, generated secrets and the
 * lock that stops a second instance from sharing them. Nobody else may list it (0711): the
 * embedded PostgreSQL's own OS user still passes through to its data dir, and everything secret
 * inside is root-only on its own.
 */
export function ensureStateDir(stateDir: string): void {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o711 });
  fs.chmodSync(stateDir, 0o711);
}

export class AlreadyRunningError extends Error {
  override name = "AlreadyRunningError";
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes the instance lock (an O_EXCL pid file). A live holder means another Ring0 uses this
 * state dir: refuse, naming it. A dead holder's lock is stale and is taken over.
 */
export function acquireInstanceLock(stateDir: string, url: string): () => void {
  const file = path.join(stateDir, "ring0.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(file, "wx", 0o600);
      fs.writeSync(fd, JSON.stringify({ pid: process.pid, url, startedAt: new Date().toISOString() }));
      fs.closeSync(fd);
      return () => {
        try {
          const holder = JSON.parse(fs.readFileSync(file, "utf8")) as { pid?: number };
          if (holder.pid === process.pid) fs.rmSync(file);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      let holder: { pid?: number; url?: string } = {};
      try {
        holder = JSON.parse(fs.readFileSync(file, "utf8"));
      } catch {
        // Unreadable lock: treat as stale.
      }
      if (holder.pid && holder.pid !== process.pid && processAlive(holder.pid)) {
        throw new AlreadyRunningError(
          `Ring0 is already running (pid ${holder.pid}, ${holder.url ?? "unknown URL"}) with state dir ${stateDir}. Stop it first, or set RING0_STATE_DIR to use another state dir.`,
        );
      }
      fs.rmSync(file, { force: true });
    }
  }
  throw new AlreadyRunningError(`Could not take the instance lock ${file}.`);
}

export interface GeneratedSecrets {
  nextauthSecret: string;
  iamClientSecret: string;
}

/** Secrets Ring0 generates on first start and keeps (mode 0600) so sessions survive restarts. */
export function loadOrCreateSecrets(stateDir: string): GeneratedSecrets {
  const file = path.join(stateDir, "secrets.json");
  try {
    const stored = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<GeneratedSecrets>;
    if (stored.nextauthSecret && stored.iamClientSecret) return stored as GeneratedSecrets;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new Error(
        `State file ${file} is unreadable (${(error as Error).message}); delete it to regenerate.`,
      );
    }
  }
  const secrets: GeneratedSecrets = {
    nextauthSecret: randomBytes(32).toString("base64url"),
    iamClientSecret: randomBytes(32).toString("base64url"),
  };
  fs.writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}
