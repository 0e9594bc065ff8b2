/**
 * Super-cluster benchmarks, all in one run so the ratios share the machine's current load:
 *   - cluster:up cold (new state dir, cached binaries) and warm (reusing the running cluster);
 *   - tRPC nodes.list latency (p50/p95) at 3, 100 and 1000 kwok nodes, against a plain
 *     `kubectl get nodes -o json` at the same sizes;
 *   - time for a new node to reach the browser's node list (Ring0 served by server.ts, Chromium),
 *     against the time until `kubectl get nodes` shows it.
 * Writes bench/results/nodes.json. Needs the production build for the browser part.
 *
 *   npx tsx bench/nodes.ts
 */
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { chromium } from "@playwright/test";
import { createCaller } from "@/server/api/root";
import { localSuperCluster } from "@/server/cluster/local";
import { connectCluster, setSuperCluster } from "@/server/k8s/cluster";
import { createLogger } from "@/server/logger";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { chromiumLaunchOptions, instanceEnvironment } from "@/test/instance";
import { sized } from "./lib/figures";

const run = promisify(execFile);
const logger = createLogger({}, "warn");
const sizes = [3, 100, sized(1000, 300)];

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return +(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN).toFixed(
    2,
  );
}

async function time<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const value = await fn();
  return [performance.now() - started, value];
}

async function until(condition: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main() {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-bench-nodes-"));
  fs.chmodSync(stateDir, 0o755);
  const cluster = localSuperCluster({ stateDir, logger });
  const results: Record<string, unknown> = { measuredAt: new Date().toISOString() };
  try {
    const [coldMs, up] = await time(() => cluster.up({ nodes: 3 }));
    const [warmMs] = await time(() => cluster.up({ nodes: 3 }));
    results.clusterUp = {
      coldMs: Math.round(coldMs),
      warmMs: Math.round(warmMs),
      coldToWarm: +(coldMs / warmMs).toFixed(1),
    };
    process.stdout.write(`cluster:up cold ${Math.round(coldMs)} ms, warm ${Math.round(warmMs)} ms\n`);

    const connection = connectCluster("bench", { file: up.kubeconfig });
    setSuperCluster(connection);
    const caller = createCaller({
      user: {
        id: "bench",
        subject: "system:bench",
        name: "Bench",
        email: null,
        tenant: "system",
        role: "operator",
      },
      db: null as never,
      requestId: "bench",
      logger,
    });
    // The kubectl tools/kube built (v1.36), not whatever is on PATH.
    const kubectlBinary = await cluster.kubectlPath();
    const kubectl = async () => {
      const { stdout } = await run(
        kubectlBinary,
        ["--kubeconfig", up.kubeconfig, "get", "nodes", "-o", "json"],
        {
          maxBuffer: 256 * 1024 * 1024,
        },
      );
      return (JSON.parse(stdout) as { items: unknown[] }).items.length;
    };

    const latency: Record<string, unknown> = {};
    for (const size of sizes) {
      await cluster.scaleNodes(size);
      await until(async () => (await caller.nodes.list()).length === size, 600_000);
      const trpc: number[] = [];
      for (let i = 0; i < 200; i++) trpc.push((await time(() => caller.nodes.list()))[0]);
      const baseline: number[] = [];
      for (let i = 0; i < 10; i++) baseline.push((await time(kubectl))[0]);
      latency[size] = {
        trpcNodesList: { p50: percentile(trpc, 50), p95: percentile(trpc, 95) },
        kubectlGetNodes: { p50: percentile(baseline, 50), p95: percentile(baseline, 95) },
        kubectlToTrpcP50: +(percentile(baseline, 50) / percentile(trpc, 50)).toFixed(1),
      };
      process.stdout.write(`${size} nodes: ${JSON.stringify(latency[size])}\n`);
    }
    results.nodesListLatencyMs = latency;
    await cluster.scaleNodes(3);
    await until(async () => (await caller.nodes.list()).length === 3, 600_000);
    results.browser = await browserPropagation(stateDir, up.kubeconfig, kubectl, cluster);
  } finally {
    // The Ring0 instance of the browser measurement may have started tenant control planes too.
    await removeLocalWorld(stateDir, logger);
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
  fs.mkdirSync("bench/results", { recursive: true });
  fs.writeFileSync("bench/results/nodes.json", `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(results)}\n`);
  process.exit(0);
}

/** Ring0 on the bench cluster, an operator's browser on /operator/nodes, then one more node. */
async function browserPropagation(
  stateDir: string,
  kubeconfig: string,
  kubectl: () => Promise<number>,
  cluster: ReturnType<typeof localSuperCluster>,
) {
  if (!fs.existsSync(".next/BUILD_ID")) return { skipped: "no production build (npm run build)" };
  const port = 3400;
  const server = spawn(path.resolve("node_modules/.bin/tsx"), ["server.ts"], {
    stdio: "ignore",
    env: {
      ...process.env,
      NODE_ENV: "production",
      ...instanceEnvironment({ port, stateDir, logLevel: "error" }),
      SUPER_KUBECONFIG: kubeconfig,
      // This bench measures the node view: no seed tenants (and no control planes) are needed.
      RING0_SEED_TENANTS: "off",
    },
  });
  const browser = await chromium.launch(chromiumLaunchOptions);
  try {
    await until(
      async () => (await fetch(`http://localhost:${port}/api/health`).catch(() => null))?.ok === true,
    );
    const page = await browser.newPage({ baseURL: `http://localhost:${port}` });
    await page.goto("/signin");
    await page.getByRole("button", { name: /^Sign in with/ }).click();
    await page.getByLabel("Username").fill("operator");
    await page.getByLabel("Password").fill("ring0-demo");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/operator$/);
    await page.goto("/operator/nodes");
    await page.getByRole("status", { name: "Node list: live" }).waitFor();
    const rows = page.getByRole("table", { name: "Nodes" }).getByRole("row");
    const samples: Array<{ browserMs: number; kubectlMs: number }> = [];
    for (let round = 0; round < 3; round++) {
      const before = await rows.count();
      const started = performance.now();
      // rows include the header: `before` rows = before - 1 nodes, so scaling to `before` adds one.
      const scaled = cluster.scaleNodes(before);
      let kubectlMs = 0;
      const seenByKubectl = until(async () => (await kubectl()) === before).then(() => {
        kubectlMs = performance.now() - started;
      });
      await page.waitForFunction(
        (expected) => document.querySelectorAll('table[aria-label="Nodes"] tr').length === expected,
        before + 1,
        { timeout: 60_000 },
      );
      const browserMs = performance.now() - started;
      await Promise.all([scaled, seenByKubectl]);
      samples.push({ browserMs: Math.round(browserMs), kubectlMs: Math.round(kubectlMs) });
    }
    const browserP50 = percentile(
      samples.map((sample) => sample.browserMs),
      50,
    );
    const kubectlP50 = percentile(
      samples.map((sample) => sample.kubectlMs),
      50,
    );
    return {
      samples,
      browserP50Ms: browserP50,
      kubectlP50Ms: kubectlP50,
      browserToKubectl: +(browserP50 / kubectlP50).toFixed(2),
    };
  } finally {
    await browser.close();
    server.kill("SIGTERM");
    await new Promise((resolve) => server.once("exit", resolve));
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
