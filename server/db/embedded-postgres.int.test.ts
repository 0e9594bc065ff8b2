/**
 * Ring0's embedded PostgreSQL, supervised: killed with SIGKILL mid-traffic it is started again on
 * its own data at once, Ring0 is told while it is down, and every committed row is still there.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "@/server/k8s/test-cluster";
import { createLogger } from "@/server/logger";
import { type EmbeddedPostgresHandle, findFreePort, startEmbeddedPostgres } from "./embedded-postgres";

const logger = createLogger({ service: "embedded-postgres-it" }, "error");
let dir: string;
let handle: EmbeddedPostgresHandle;
const problems: (string | null)[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-pg-it-"));
  fs.chmodSync(dir, 0o755);
  handle = await startEmbeddedPostgres({
    dataDir: path.join(dir, "data"),
    port: await findFreePort(),
    logger,
    database: "faults",
    onDown: (problem) => problems.push(problem),
  });
}, 120_000);

afterAll(async () => {
  await handle?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** One statement on a fresh connection (a pool would hide the outage behind retries). */
async function query<T extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: handle.url, connectionTimeoutMillis: 2_000 });
  await client.connect();
  try {
    return await client.query<T>(text, values);
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe("the embedded PostgreSQL, killed mid-traffic", () => {
  it("is started again at once on its data; Ring0 hears why meanwhile; no committed row is lost", async () => {
    await query("CREATE TABLE writes (n integer PRIMARY KEY)");
    const committed: number[] = [];
    let failures = 0;
    let stopped = false;
    const writer = (async () => {
      for (let n = 0; !stopped; n++) {
        try {
          await query("INSERT INTO writes (n) VALUES ($1)", [n]);
          committed.push(n);
        } catch {
          failures++;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    await eventually(() => (committed.length >= 10 ? true : undefined), 20_000);

    const pid = Number(fs.readFileSync(path.join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
    process.kill(pid, "SIGKILL");

    try {
      // Told it is down, then that it serves again; writes go through again.
      await eventually(() => (problems.includes(null) ? true : undefined), 60_000);
      const after = committed.length;
      await eventually(() => (committed.length > after + 5 ? true : undefined), 20_000);
    } finally {
      stopped = true;
      await writer;
    }
    expect(problems[0]).toMatch(/^PostgreSQL exited \(signal SIGKILL\); Ring0 is starting it again$/);
    expect(problems.at(-1)).toBeNull();
    // A new postmaster on the same data dir.
    const newPid = Number(fs.readFileSync(path.join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
    expect(newPid).not.toBe(pid);
    // Every acknowledged insert survived the crash (WAL replay); some failed while it was down.
    const rows = await query<{ n: number }>("SELECT n FROM writes");
    const present = new Set(rows.rows.map((row) => row.n));
    for (const n of committed) expect(present.has(n)).toBe(true);
    expect(failures).toBeGreaterThan(0);
  }, 120_000);
});
