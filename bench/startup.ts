/**
 * Start-up benchmark: time from process spawn to the first page served (GET /signin → 200), and on
 * to the whole start done (GET /api/health → 200: the super cluster, tenants' runtime and sharing
 * up behind the server), for a cold start (empty state dir: initdb, migrations, IAM keys, a new
 * local super cluster) and a warm start (same state dir, the running super cluster reused),
 * each as a ratio to a baseline measured in the same run (a bare Node process answering HTTP).
 * Needs a production build (`npm run build`). Writes bench/results/startup.json.
 *
 *   npx tsx bench/startup.ts [rounds=3]
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { isPortFree } from "@/server/cluster/ports";
import { createLogger } from "@/server/logger";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { instanceEnvironment } from "@/test/instance";

const rounds = Number(process.argv[2] ?? 3);
const port = 3200;
const url = `http://localhost:${port}`;

async function firstResponse(target: string, child: ChildProcess, started: number): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before serving`);
    try {
      const response = await fetch(target, { redirect: "manual" });
      if (response.status === 200) return performance.now() - started;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Stops a started server and waits until its ports are free again: tsx may exit before its node
 * child has finished shutting down (its PostgreSQL stops last), and the next start needs them.
 */
async function stop(child: ChildProcess, ports: number[] = []): Promise<void> {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  const deadline = Date.now() + 60_000;
  for (const port of ports) {
    while (!(await isPortFree(port)) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function baseline(): Promise<number> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ["-e", `require("node:http").createServer((q,s)=>s.end("ok")).listen(${port},"127.0.0.1")`],
    { stdio: "ignore" },
  );
  const elapsed = await firstResponse(`${url}/`, child, started);
  await stop(child);
  return elapsed;
}

async function ring0(stateDir: string): Promise<{ page: number; started: number }> {
  const started = performance.now();
  // The server itself (not npm) so that its exit means its PostgreSQL and ports are released.
  const child = spawn(path.resolve("node_modules/.bin/tsx"), ["server.ts"], {
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      ...process.env,
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      ...instanceEnvironment({ port, stateDir, logLevel: "error" }),
    },
  });
  const page = await firstResponse(`${url}/signin`, child, started);
  // Stopped only once the world behind the server is up, so the next start finds it whole.
  const whole = await firstResponse(`${url}/api/health`, child, started);
  const environment = instanceEnvironment({ port, stateDir });
  await stop(child, [port, Number(environment.IAM_PORT), Number(environment.EMBEDDED_POSTGRES_PORT)]);
  return { page, started: whole };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function main() {
  if (!fs.existsSync(".next/BUILD_ID")) throw new Error("run `npm run build` first");
  const samples = {
    baseline: [] as number[],
    cold: [] as number[],
    warm: [] as number[],
    coldStarted: [] as number[],
    warmStarted: [] as number[],
  };
  for (let round = 0; round < rounds; round++) {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-bench-"));
    fs.chmodSync(stateDir, 0o755);
    try {
      samples.baseline.push(await baseline());
      const cold = await ring0(stateDir);
      samples.cold.push(cold.page);
      samples.coldStarted.push(cold.started);
      const warm = await ring0(stateDir);
      samples.warm.push(warm.page);
      samples.warmStarted.push(warm.started);
    } finally {
      // Ring0 leaves its local super cluster and tenant control planes running for the next start;
      // these are ours to remove.
      await removeLocalWorld(stateDir, createLogger({}, "warn"));
      fs.rmSync(stateDir, { recursive: true, force: true });
    }
    process.stdout.write(`round ${round + 1}/${rounds} done\n`);
  }
  const result = {
    measuredAt: new Date().toISOString(),
    rounds,
    medianMs: {
      baseline: Math.round(median(samples.baseline)),
      cold: Math.round(median(samples.cold)),
      warm: Math.round(median(samples.warm)),
      coldStarted: Math.round(median(samples.coldStarted)),
      warmStarted: Math.round(median(samples.warmStarted)),
    },
    ratios: {
      coldToBaseline: +(median(samples.cold) / median(samples.baseline)).toFixed(1),
      warmToBaseline: +(median(samples.warm) / median(samples.baseline)).toFixed(1),
      coldToWarm: +(median(samples.cold) / median(samples.warm)).toFixed(2),
      warmStartedToBaseline: +(median(samples.warmStarted) / median(samples.baseline)).toFixed(1),
    },
    samplesMs: samples,
  };
  fs.mkdirSync("bench/results", { recursive: true });
  fs.writeFileSync("bench/results/startup.json", `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result.medianMs)} ${JSON.stringify(result.ratios)}\n`);
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
