/**
 * Runs every suite and prints one summed line `N passed, N failed, N skipped`:
 * the Kubernetes binaries build (tools/kube, cached), static checks (Biome, TypeScript), Vitest
 * (unit + integration against a real PostgreSQL and a real local super cluster),
 * the production build, Playwright in Debian's Chromium against it, Ring0's images installed with
 * its chart on a real node (test/in-cluster), the conformance subset, then the benchmarks.
 * Exits non-zero if anything failed.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

interface Tally {
  passed: number;
  failed: number;
  skipped: number;
}

const resultsDir = path.resolve(".ring0/test-results");
const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const total: Tally = { passed: 0, failed: 0, skipped: 0 };
const startedAt = Date.now();
const notes: string[] = [];
/** Each failed test by name, printed again at the very end. */
const failures: string[] = [];

function run(command: string, args: string[], env: Record<string, string> = {}): Promise<number> {
  process.stdout.write(`\n▶ ${command} ${args.join(" ")}\n`);
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: "inherit", env: { ...process.env, ...env } });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on("error", (error) => {
      process.stderr.write(`${command}: ${error.message}\n`);
      resolve(1);
    });
  });
}

/** Vitest's projects as one stage, each test counted; failures named for the closing summary. */
async function vitestStage(stage: string, projects: string[]) {
  const json = path.join(resultsDir, `${stage.replace(/[^a-z0-9]+/gi, "-")}.json`);
  const code = await run("vitest", [
    "run",
    ...projects.flatMap((project) => ["--project", project]),
    "--reporter=default",
    "--reporter=json",
    `--outputFile=${json}`,
  ]);
  const report = readJson<{
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    testResults?: {
      name: string;
      assertionResults?: { fullName?: string; title: string; status: string; failureMessages?: string[] }[];
      message?: string;
      status?: string;
    }[];
  }>(json);
  if (!report) {
    add(stage, { passed: 0, failed: 1, skipped: 0 });
    return;
  }
  // The failures' names go in the closing summary too: only the tail of a CI log may be kept.
  // A file that failed with no failed test (its beforeAll threw: every test skipped) counts as one
  // failure, whatever vitest's exit code says.
  let failedFiles = 0;
  for (const file of report.testResults ?? []) {
    const where = path.relative(process.cwd(), file.name);
    const failed = (file.assertionResults ?? []).filter((result) => result.status === "failed");
    for (const result of failed) {
      const first = (result.failureMessages?.[0] ?? "").split("\n")[0]?.slice(0, 300);
      failures.push(`${stage} ${where} › ${result.fullName ?? result.title}: ${first}`);
    }
    if (failed.length === 0 && file.status === "failed") {
      failedFiles++;
      failures.push(`${stage} ${where}: ${(file.message ?? "failed").split("\n")[0]?.slice(0, 300)}`);
    }
  }
  add(stage, {
    passed: report.numPassedTests,
    failed:
      report.numFailedTests +
      failedFiles +
      (code !== 0 && report.numFailedTests === 0 && failedFiles === 0 ? 1 : 0),
    skipped: report.numPendingTests + report.numTodoTests,
  });
}

interface PlaywrightSuite {
  title: string;
  file?: string;
  specs?: {
    title: string;
    file?: string;
    tests?: {
      status?: string;
      results?: { error?: { message?: string; location?: { file: string; line: number } } }[];
    }[];
  }[];
  suites?: PlaywrightSuite[];
}

/** The specs of a Playwright JSON report that failed or passed only on a retry. */
function playwrightFailures(report: { suites?: PlaywrightSuite[] }): string[] {
  const found: string[] = [];
  const walk = (suite: PlaywrightSuite, trail: string[]) => {
    for (const spec of suite.specs ?? []) {
      const failed = spec.tests?.find((test) => test.status === "unexpected" || test.status === "flaky");
      if (!failed) continue;
      // The first error's first line and where it was thrown: only the tail of a CI log may be kept.
      const error = failed.results?.find((result) => result.error)?.error;
      const message =
        stripAnsi(error?.message ?? "")
          .trim()
          .split("\n")[0]
          ?.slice(0, 300) ?? "";
      const at = error?.location ? ` at ${path.basename(error.location.file)}:${error.location.line}` : "";
      found.push(
        `e2e ${spec.file ?? suite.file ?? ""} › ${[...trail, spec.title].join(" › ")} (${failed.status})${message ? `: ${message}${at}` : ""}`,
      );
    }
    for (const child of suite.suites ?? []) walk(child, [...trail, child.title]);
  };
  for (const suite of report.suites ?? []) walk(suite, []);
  return found;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes are what it removes
const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "");

let stageStarted = Date.now();

/** Each stage's tally and how long it took (stages run one after another). */
function add(stage: string, tally: Tally) {
  total.passed += tally.passed;
  total.failed += tally.failed;
  total.skipped += tally.skipped;
  const seconds = Math.round((Date.now() - stageStarted) / 1000);
  stageStarted = Date.now();
  notes.push(
    `${stage}: ${tally.passed} passed, ${tally.failed} failed, ${tally.skipped} skipped (${seconds} s)`,
  );
}

/** A stage without per-test results counts as one check. */
async function check(stage: string, command: string, args: string[], env: Record<string, string> = {}) {
  const code = await run(command, args, env);
  add(stage, code === 0 ? { passed: 1, failed: 0, skipped: 0 } : { passed: 0, failed: 1, skipped: 0 });
  return code === 0;
}

/**
 * `go test -json` in a Go module of tools/: each test counts (packages that fail to build count as
 * one failure). The sandbox tests need root and busybox; without them they are skipped, and say so.
 */
async function goTests(stage: string, dir: string, packages: string[]) {
  const output = path.join(resultsDir, `${stage.replace(/[^a-z0-9]+/gi, "-")}.jsonl`);
  const out = fs.openSync(output, "w");
  const code = await new Promise<number>((resolve) => {
    process.stdout.write(`\n▶ go test ${packages.join(" ")} (${dir})\n`);
    const child = spawn("go", ["test", "-count=1", "-json", ...packages], {
      cwd: dir,
      stdio: ["ignore", out, "inherit"],
      env: {
        ...process.env,
        // The installed Go may live in /usr/local/go/bin without being on PATH (as kube-build.sh knows).
        PATH: `${process.env.PATH ?? ""}:/usr/local/go/bin`,
        GOTOOLCHAIN: "local",
        GOFLAGS: "-mod=readonly -buildvcs=false",
        CGO_ENABLED: "0",
        GOWORK: "off",
      },
    });
    child.on("exit", (exitCode) => resolve(exitCode ?? 1));
    child.on("error", (error) => {
      process.stderr.write(`go: ${error.message}\n`);
      resolve(1);
    });
  });
  fs.closeSync(out);
  const tally: Tally = { passed: 0, failed: 0, skipped: 0 };
  for (const line of fs.readFileSync(output, "utf8").split("\n")) {
    if (!line.startsWith("{")) continue;
    const event = JSON.parse(line) as { Action?: string; Test?: string; Output?: string };
    if (event.Output && (event.Action === "output" || !event.Action)) process.stdout.write(event.Output);
    if (!event.Test) continue;
    if (event.Action === "pass") tally.passed += 1;
    else if (event.Action === "fail") tally.failed += 1;
    else if (event.Action === "skip") tally.skipped += 1;
  }
  if (code !== 0 && tally.failed === 0) tally.failed = 1;
  add(stage, tally);
}

async function ensureChromium(): Promise<boolean> {
  if (fs.existsSync(chromium)) return true;
  if (process.getuid?.() !== 0) {
    process.stderr.write(
      `Chromium is missing at ${chromium}: run 'sudo apt-get install -y chromium' or set CHROMIUM_PATH.\n`,
    );
    return false;
  }
  process.stdout.write("Chromium is missing: installing Debian's chromium package…\n");
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  return (
    (await run("apt-get", ["update", "-qq"], env)) === 0 &&
    (await run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "chromium"], env)) === 0 &&
    fs.existsSync(chromium)
  );
}

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as T;
  } catch {
    return null;
  }
}

/** Benchmarks here run in their quick mode: every ratio, smaller sizes (bench/lib/figures.ts). */
const quickBenchmarks = { RING0_BENCH_QUICK: "1" };

async function main() {
  fs.rmSync(resultsDir, { recursive: true, force: true });
  fs.mkdirSync(resultsDir, { recursive: true });

  // Kubernetes 1.36, etcd and kwok binaries for the local super cluster (cached; cold builds are slow).
  await check("kube-build", "bash", ["scripts/kube-build.sh"]);
  // helm v3 for the helm template | kubectl apply integration test (tools/helm, cached; cold ~minutes).
  await check("helm-build", "bash", ["scripts/helm-build.sh"]);
  // gVisor (runsc and its containerd shim) for the real node's sandboxed runtime (tools/sandbox, cached; cold ~2 minutes).
  await check("sandbox-build", "bash", ["scripts/sandbox-build.sh"]);
  // kube-router for real nodes' NetworkPolicies (tools/netpol, cached; cold ~3 minutes).
  await check("netpol-build", "bash", ["scripts/netpol-build.sh"]);
  await goTests("go:tools", "tools/kube/kwok", ["./simkubelet", "./image"]);
  await check("lint", "biome", ["ci", "."]);
  // The house plan: no folder of server/ imports from a floor above its own (scripts/layers.ts).
  await check("layers", "tsx", ["scripts/layers.ts"]);
  await check("typecheck", "tsc", ["--noEmit"]);

  await vitestStage("vitest", ["unit", "integration"]);

  const built = await check("build", "npm", ["run", "--silent", "build"]);
  if (built && (await ensureChromium())) {
    const playwrightJson = path.join(resultsDir, "playwright.json");
    fs.rmSync(path.resolve(".ring0/e2e"), { recursive: true, force: true });
    const code = await run("playwright", ["test"], { PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightJson });
    const report = readJson<{
      stats: { expected: number; unexpected: number; flaky: number; skipped: number };
      suites?: PlaywrightSuite[];
    }>(playwrightJson);
    if (report) {
      failures.push(...playwrightFailures(report));
      add("e2e", {
        passed: report.stats.expected,
        failed:
          report.stats.unexpected +
          report.stats.flaky +
          (code !== 0 && report.stats.unexpected === 0 ? 1 : 0),
        skipped: report.stats.skipped,
      });
    } else {
      add("e2e", { passed: 0, failed: 1, skipped: 0 });
    }
  } else {
    add("e2e", { passed: 0, failed: 1, skipped: 0 });
  }

  // Ring0 itself in the local super cluster (test/in-cluster): its images from the production build,
  // run on a real node (a few minutes).
  if (built) await vitestStage("in-cluster", ["in-cluster"]);
  else add("in-cluster", { passed: 0, failed: 1, skipped: 0 });

  // The upstream conformance suite's recorded subset through Ring0 (issue 17): the suite is built
  // first (cached; about 11 minutes cold), then run against a Ring0 instance of its own with a real
  // node (a few minutes); any recorded spec that no longer passes fails the run.
  const suite = await check("conformance-build", "bash", ["scripts/conformance-build.sh"]);
  if (built && suite) {
    await run("tsx", ["scripts/conformance-ci.ts"]);
    add(
      "conformance",
      readJson<Tally>(path.resolve("bench/results/conformance-ci/tally.json")) ?? {
        passed: 0,
        failed: 1,
        skipped: 0,
      },
    );
  } else {
    add("conformance", { passed: 0, failed: 1, skipped: 0 });
  }

  // Benchmarks run too (figures to bench/results/*.json); they fail only if they cannot run.
  if (built) {
    await check("bench:startup", "tsx", ["bench/startup.ts", "2"], quickBenchmarks);
    await check("bench:nodes", "tsx", ["bench/nodes.ts"], quickBenchmarks);
  }
  // Tenant control planes and the kube gateway (no production build needed; ~2.5 min together).
  await check("bench:provisioning", "tsx", ["bench/provisioning.ts"], quickBenchmarks);
  await check("bench:gateway", "tsx", ["bench/gateway.ts"], quickBenchmarks);
  // Tenant quotas: kubectl apply of 200 pods with and without the webhook, usage computation at
  // 10 × 1000 pods, the race for the last units (must be exact; ~1.5 min).
  await check("bench:quotas", "tsx", ["bench/quotas.ts"], quickBenchmarks);
  // The syncer: pods to Running through ten tenant control planes against the super cluster
  // directly, the noisy neighbour, memory per pod, the patroller (several minutes).
  await check("bench:syncer", "tsx", ["bench/syncer.ts"], quickBenchmarks);
  // Browser streams: log throughput and `seq 1000000` against kubectl, keystroke echo against the
  // API server's exec, memory with 250 streams held for 5 minutes (~9 min; --expose-gc via npm).
  await check("bench:streams", "npm", ["run", "bench:streams"], quickBenchmarks);
  // The walls' cost: etcd over TLS against a bare cluster, a sandboxed exec against a plain request (~1 min).
  await check("bench:walls", "tsx", ["bench/walls.ts"], quickBenchmarks);
  // Faults: kill -9 of a tenant's API server or etcd until its users are served again, healed by
  // Ring0 alone, against a bare kwokctl cluster restarted by hand at once (~1 min).
  await check("bench:faults", "tsx", ["bench/faults.ts"], quickBenchmarks);
  // Real nodes: pods to Running through Ring0 against the super cluster directly, exec and log
  // throughput through the vn-agent against kubectl straight to the kubelet, the node's RSS (~2 min).
  await check("bench:real-nodes", "tsx", ["bench/real-nodes.ts"], quickBenchmarks);

  process.stdout.write(`\n${notes.map((note) => `  ${note}`).join("\n")}\n`);
  if (failures.length > 0) {
    process.stdout.write(`  failed tests:\n${failures.map((failure) => `    ${failure}`).join("\n")}\n`);
  }
  const minutes = ((Date.now() - startedAt) / 60_000).toFixed(1);
  process.stdout.write(`  total: ${minutes} min\n`);
  process.stdout.write(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped\n`);
  process.exit(total.failed > 0 ? 1 : 0);
}

void main();
