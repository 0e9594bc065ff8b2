/**
 * The upstream Kubernetes conformance suite, through Ring0 and on a bare baseline (issue 17):
 *
 *   npm run conformance -- --tenant acme [--focus REGEX] [--skip REGEX] [--only ring0|baseline]
 *                          [--procs N] [--kubeconfig FILE] [--results DIR] [--shard K/N]
 *
 * Through Ring0: the tenant's control plane through the kube gateway, with a kubeconfig issued as
 * one of the tenant's admins (a real Ring0 API token and Ring0's CA; `--kubeconfig` takes one from
 * `ring0 kubeconfig <tenant>` instead). Baseline: the local super cluster itself — a bare kwokctl
 * control plane of the same version with the same real node, and no Ring0 in the path. The same
 * selection runs on both, one after the other (the baseline first); `--only` runs one side and
 * compares it with the other side's last run in the same results directory. `--shard K/N` runs
 * every Nth spec of the selection (a full run is hours a side on a small machine: run its shards
 * when there is time, in any order); the summary then merges every shard of N run so far and says
 * which are missing. Both JUnit reports, and a
 * summary (passed / failed / skipped per SIG, and what passes on the baseline but fails through
 * Ring0), are written under bench/results/conformance/; the two summaries are printed side by side.
 *
 * The local world must be running (`./ring0 start`), with real nodes. The suite's binaries are
 * built on first use (scripts/conformance-build.sh, about 10 minutes once, then cached), and its
 * test images (agnhost, busybox, kitten, nautilus, nonewprivs, nginx stand-ins, pause) are built
 * and pushed into Ring0's registry when it lacks them (scripts/lib/conformance-images.ts).
 * Default selection: `\[Conformance\]` without `\[Serial\]|\[Disruptive\]`.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { run } from "@/server/cluster/process";
import { PAUSE_IMAGE, SIMULATED_TAINT_KEY } from "@/server/cluster/real-node/plan";
import { createPrismaClient, disconnectDb, setDatabaseUrl } from "@/server/db/client";
import { embeddedPostgresUrl } from "@/server/db/embedded-postgres";
import { env } from "@/server/env";
import { kubeconfigCa, loadGatewayTls } from "@/server/gateway/tls";
import { serverSideApply } from "@/server/k8s/apply";
import { connectCluster } from "@/server/k8s/cluster";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import { createKubeconfigService } from "@/server/kubeconfigs/service";
import { createLogger } from "@/server/logger";
import { createUserRepository } from "@/server/users/repository";
import { ensureConformanceImages } from "./lib/conformance-images";
import {
  compare,
  focusOf,
  mergeRuns,
  parseJUnit,
  parseShard,
  type Summary,
  shardOf,
  sideBySide,
  specsOfDryRun,
  summarize,
  type TestCase,
} from "./lib/conformance-report";

const USAGE =
  "usage: npm run conformance -- --tenant NAME [--focus REGEX] [--skip REGEX] [--only ring0|baseline] [--procs N] [--kubeconfig FILE] [--results DIR] [--shard K/N]\n";
const DEFAULT_FOCUS = "\\[Conformance\\]";
const DEFAULT_SKIP = "\\[Serial\\]|\\[Disruptive\\]";

function fail(message: string, code = 1): never {
  process.stderr.write(message.endsWith("\n") ? message : `${message}\n`);
  process.exit(code);
}

interface Options {
  tenant: string;
  focus: string;
  skip: string;
  only?: "ring0" | "baseline";
  procs: number;
  kubeconfig?: string;
  /** Where the reports and summary go (default bench/results/conformance). */
  results: string;
  /** Every `of`th spec of the selection, from the `index`th (1-based). */
  shard?: { index: number; of: number };
}

const FLAGS = ["--tenant", "--focus", "--skip", "--only", "--procs", "--kubeconfig", "--results", "--shard"];

function parseArgs(argv: string[]): Options {
  const values: Record<string, string> = {};
  for (let index = 0; index < argv.length; index++) {
    const flag = argv[index] ?? "";
    if (!FLAGS.includes(flag)) fail(`unknown argument ${JSON.stringify(flag)}\n${USAGE}`, 2);
    const value = argv[index + 1];
    if (value === undefined) fail(`${flag} needs a value\n${USAGE}`, 2);
    values[flag.slice(2)] = value;
    index += 1;
  }
  const tenant = values.tenant ?? fail(`--tenant is required\n${USAGE}`, 2);
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(tenant))
    fail(`--tenant ${JSON.stringify(tenant)} is not a tenant name`, 2);
  for (const flag of ["focus", "skip"] as const) {
    if (values[flag] === undefined) continue;
    try {
      new RegExp(values[flag]);
    } catch (error) {
      fail(`--${flag} is not a regular expression: ${(error as Error).message}`, 2);
    }
  }
  if (values.only !== undefined && values.only !== "ring0" && values.only !== "baseline") {
    fail(`--only takes ring0 or baseline, not ${JSON.stringify(values.only)}`, 2);
  }
  const shard = values.shard === undefined ? undefined : parseShard(values.shard);
  if (typeof shard === "string") fail(shard, 2);
  const procs = Number(values.procs ?? 1);
  if (!Number.isInteger(procs) || procs < 1 || procs > 8) fail("--procs takes a whole number from 1 to 8", 2);
  return {
    tenant,
    focus: values.focus ?? DEFAULT_FOCUS,
    skip: values.skip ?? DEFAULT_SKIP,
    only: values.only as Options["only"],
    procs,
    kubeconfig: values.kubeconfig,
    results: path.resolve(values.results ?? "bench/results/conformance"),
    shard,
  };
}

/** A kubeconfig through the gateway as the tenant's first admin in the IAM's accounts file. */
async function tenantAdminKubeconfig(tenant: string, file: string): Promise<string> {
  const config = env();
  const accounts = JSON.parse(fs.readFileSync(config.IAM_ACCOUNTS_FILE, "utf8")) as {
    accounts: { username: string; tenant: string; name: string; email?: string; roles: string[] }[];
  };
  const admin = accounts.accounts.find(
    (account) => account.tenant === tenant && account.roles.includes("tenant-admin"),
  );
  if (!admin) {
    fail(
      `no admin of tenant "${tenant}" in ${config.IAM_ACCOUNTS_FILE}: pass --kubeconfig with one from \`ring0 kubeconfig ${tenant}\``,
    );
  }
  const url =
    config.DATABASE_URL ??
    embeddedPostgresUrl(path.join(config.stateDir, "postgres"), config.EMBEDDED_POSTGRES_PORT);
  const db = createPrismaClient(url);
  // The issue is audited as the portal's would be.
  setDatabaseUrl(url);
  try {
    const identity = {
      subject: `${tenant}:${admin.username}`,
      tenant,
      name: admin.name,
      role: "tenant-admin" as const,
      email: admin.email ?? null,
    };
    // What a sign-in records; the token is then the admin's own, as the portal would issue it.
    const user = await createUserRepository(db).recordSignIn(identity, new Date());
    const tls = await loadGatewayTls(config);
    const service = createKubeconfigService({
      db,
      gateway: { gatewayUrl: config.gatewayUrl, caPem: kubeconfigCa(config, tls) },
    });
    const issued = await service.issueKubeconfig({
      user: { ...identity, id: user.id },
      tenant,
      expiresInDays: 1,
      name: "conformance run",
    });
    fs.writeFileSync(file, issued.kubeconfig, { mode: 0o600 });
    return file;
  } finally {
    await db.$disconnect();
    await disconnectDb();
  }
}

const ANCHOR_NAMESPACE = "ring0-conformance-anchor";

/** A pause pod in the tenant, running on a real node; resolves once the tenant sees a Ready node. */
async function anchorPod(kubeconfig: string): Promise<{ remove(): Promise<void> }> {
  const conn = connectCluster("conformance-tenant", { file: kubeconfig });
  const deadline = Date.now() + 180_000;
  // The previous run's anchor namespace may still be going away.
  for (;;) {
    const found = await kubeRequestText(conn, { path: `/api/v1/namespaces/${ANCHOR_NAMESPACE}` });
    if (
      found.status === 404 ||
      !(JSON.parse(found.text) as { metadata?: { deletionTimestamp?: string } }).metadata?.deletionTimestamp
    )
      break;
    if (Date.now() > deadline)
      fail(`the namespace ${ANCHOR_NAMESPACE} of a previous run is still terminating`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  await serverSideApply(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: ANCHOR_NAMESPACE } });
  await serverSideApply(conn, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "anchor", namespace: ANCHOR_NAMESPACE },
    spec: { containers: [{ name: "pause", image: PAUSE_IMAGE }] },
  });
  for (;;) {
    const nodes = await kubeRequest<{
      items?: { status?: { conditions?: { type: string; status: string }[] } }[];
    }>(conn, { path: "/api/v1/nodes" });
    const ready = (nodes.items ?? []).some((node) =>
      node.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True"),
    );
    if (ready) break;
    if (Date.now() > deadline) {
      fail(
        `the tenant sees no Ready node 3 minutes after its anchor pod was created: is a real node up (./ring0 start)?`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return {
    async remove() {
      await kubeRequestText(conn, { method: "DELETE", path: `/api/v1/namespaces/${ANCHOR_NAMESPACE}` });
    },
  };
}

/** The test cases of the JUnit reports in a directory, or undefined when it holds none. */
function readReports(reportDir: string): TestCase[] | undefined {
  if (!fs.existsSync(reportDir)) return undefined;
  const reports = fs.readdirSync(reportDir).filter((file) => /^junit.*\.xml$/.test(file));
  if (reports.length === 0) return undefined;
  return reports.flatMap((file) => parseJUnit(fs.readFileSync(path.join(reportDir, file), "utf8")));
}

/**
 * With `--only`, the other side is the last run of it in the same results directory (a full run
 * takes an hour a side, so the two are often run apart); empty when there is none.
 */
function lastRun(side: "ring0" | "baseline", results: string): TestCase[] {
  const cases = readReports(path.join(results, side)) ?? [];
  if (cases.length > 0) {
    process.stdout.write(`  ${side}: compared with its last run in ${path.join(results, side)}\n`);
  }
  return cases;
}

/** How a run names its selection: the shard, the focus, or how many specs it names one by one. */
function selectionName(options: Options): string {
  if (options.shard) return `shard ${options.shard.index}/${options.shard.of}`;
  if (options.focus.length <= 160) return options.focus;
  return `${options.focus.split("|").length} specs by name`;
}

/** Runs the selection against one kubeconfig; resolves with its test cases (from its JUnit report). */
async function runSuite(
  name: "ring0" | "baseline",
  bin: string,
  kubeconfig: string,
  options: Options,
  reportDir: string,
): Promise<TestCase[]> {
  fs.rmSync(reportDir, { recursive: true, force: true });
  fs.mkdirSync(reportDir, { recursive: true });
  const suiteArgs = [
    `--kubeconfig=${kubeconfig}`,
    "--provider=skeleton",
    "--allowed-not-ready-nodes=1",
    `--non-blocking-taints=${SIMULATED_TAINT_KEY},node-role.kubernetes.io/control-plane`,
    `--report-dir=${reportDir}`,
    `--ginkgo.focus=${options.focus}`,
    `--ginkgo.skip=${options.skip}`,
    "--ginkgo.timeout=4h",
  ];
  const [command, args] =
    options.procs > 1
      ? [
          path.join(bin, "ginkgo"),
          [
            `--procs=${options.procs}`,
            "--timeout=4h",
            `--output-dir=${reportDir}`,
            path.join(bin, "e2e.test"),
            "--",
            ...suiteArgs,
          ],
        ]
      : [path.join(bin, "e2e.test"), suiteArgs];
  const log = fs.openSync(path.join(reportDir, "e2e.log"), "w");
  const started = Date.now();
  process.stdout.write(
    `▶ ${name}: ${selectionName(options)} without ${options.skip} (log: ${path.join(reportDir, "e2e.log")})\n`,
  );
  const code = await new Promise<number>((resolve) => {
    const child = spawn(command, args as string[], { stdio: ["ignore", log, log] });
    child.on("exit", (exitCode) => resolve(exitCode ?? 1));
    child.on("error", () => resolve(127));
  });
  fs.closeSync(log);
  const cases = readReports(reportDir);
  if (cases === undefined) {
    fail(`${name}: the suite wrote no JUnit report (exit ${code}); see ${path.join(reportDir, "e2e.log")}`);
  }
  process.stdout.write(
    `  ${name}: ${cases.length} specs in ${Math.round((Date.now() - started) / 1000)} s (exit ${code})\n`,
  );
  return cases;
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const config = env();
  const results = options.results;
  fs.mkdirSync(results, { recursive: true });
  const superKubeconfig = path.join(config.stateDir, "super-cluster.kubeconfig");
  if (!fs.existsSync(superKubeconfig)) {
    fail(`no local super cluster at ${config.stateDir}: start the local world first (./ring0 start)`);
  }

  const built = await run("bash", ["scripts/conformance-build.sh"], { timeoutMs: 60 * 60_000 });
  const bin = built.stdout.trim().split("\n").at(-1) ?? "";
  // The suite's test images, in the registry real nodes pull from (only what it lacks is pushed).
  const kubeBinDir = await kubeBinaries(createLogger({ service: "conformance" }, "warn"), { build: false });
  const pushed = await ensureConformanceImages({
    stateDir: config.stateDir,
    kubeBinDir,
    conformanceBinDir: bin,
    log: (line) => process.stdout.write(`  test images: ${line}\n`),
  });
  if (pushed.length > 0)
    process.stdout.write(`  test images: ${pushed.length} pushed into Ring0's registry\n`);

  const work = path.join(config.stateDir, "conformance");
  fs.mkdirSync(work, { recursive: true, mode: 0o700 });
  const ring0Kubeconfig =
    options.kubeconfig ??
    (await tenantAdminKubeconfig(options.tenant, path.join(work, `${options.tenant}.kubeconfig`)));

  // A shard: the selection's specs by name (a dry run), every Nth of them, in a directory of its own.
  let runDir = results;
  let selection = options;
  if (options.shard) {
    const { index, of } = options.shard;
    const dry = await run(
      path.join(bin, "e2e.test"),
      [
        "--ginkgo.dry-run",
        "--ginkgo.v",
        "--ginkgo.no-color",
        `--ginkgo.focus=${options.focus}`,
        `--ginkgo.skip=${options.skip}`,
      ],
      { timeoutMs: 10 * 60_000 },
    );
    const specs = shardOf(specsOfDryRun(dry.stdout), options.shard);
    if (specs.length === 0) fail(`shard ${index}/${of} of this selection holds no spec`);
    process.stdout.write(`  shard ${index}/${of}: ${specs.length} specs\n`);
    selection = { ...options, focus: focusOf(specs) };
    runDir = path.join(results, "shards", String(of), String(index));
  }

  const started = Date.now();
  // A tenant sees a node only where its pods run (vNodes), and the suite starts only once it sees
  // a Ready one: keep one pod of the tenant's running for the length of the run.
  const anchor = options.only === "baseline" ? undefined : await anchorPod(ring0Kubeconfig);
  const baseline =
    options.only === "ring0"
      ? lastRun("baseline", runDir)
      : await runSuite("baseline", bin, superKubeconfig, selection, path.join(runDir, "baseline"));
  const ring0 =
    options.only === "baseline"
      ? lastRun("ring0", runDir)
      : await runSuite("ring0", bin, ring0Kubeconfig, selection, path.join(runDir, "ring0"));
  await anchor?.remove();
  const minutes = Math.round((Date.now() - started) / 6_000) / 10;
  if (options.shard) {
    // This shard's own summary, then the whole run so far: every shard of N that has reports.
    writeSummary(runDir, options, minutes, ring0, baseline);
    const shardsDir = path.dirname(runDir);
    const done = fs
      .readdirSync(shardsDir)
      .map(Number)
      .filter((index) => Number.isInteger(index))
      .sort((a, b) => a - b);
    const side = (name: "ring0" | "baseline") =>
      mergeRuns(done.map((index) => readReports(path.join(shardsDir, String(index), name)) ?? []));
    const missing = Array.from({ length: options.shard.of }, (_, at) => at + 1).filter(
      (index) => !done.includes(index),
    );
    process.stdout.write(
      `\nshards of ${options.shard.of} run so far: ${done.join(", ")}${missing.length > 0 ? `; still to run: ${missing.join(", ")}` : " (the whole selection)"}\n`,
    );
    // The run's time is its shards' (each ran both its sides).
    const shardMinutes = done.map((index) => {
      const file = path.join(shardsDir, String(index), "summary.json");
      return fs.existsSync(file) ? Number(JSON.parse(fs.readFileSync(file, "utf8")).minutes) || 0 : 0;
    });
    const total = Math.round(shardMinutes.reduce((sum, value) => sum + value, 0) * 10) / 10;
    writeSummary(results, options, total, side("ring0"), side("baseline"), {
      of: options.shard.of,
      done,
      missing,
    });
    return;
  }
  writeSummary(results, options, minutes, ring0, baseline);
}

/** Writes summary.json for the two sides' cases and prints them side by side with the differences. */
function writeSummary(
  results: string,
  options: Options,
  minutes: number,
  ring0: TestCase[],
  baseline: TestCase[],
  shards?: { of: number; done: number[]; missing: number[] },
): void {
  const summaries: Record<"ring0" | "baseline", Summary> = {
    ring0: summarize(ring0),
    baseline: summarize(baseline),
  };
  const comparison = compare(ring0, baseline);
  const summary = {
    at: new Date().toISOString(),
    tenant: options.tenant,
    focus: options.focus,
    skip: options.skip,
    procs: options.procs,
    ...(shards ? { shards } : {}),
    minutes,
    ring0: summaries.ring0,
    baseline: summaries.baseline,
    passedOnBaselineFailedThroughRing0: comparison.regressions.map((testCase) => ({
      name: testCase.name,
      failure: testCase.failure,
    })),
    failedOnBaselinePassedThroughRing0: comparison.onlyThroughRing0,
    ranOnOneSideOnly: comparison.unmatched,
  };
  fs.writeFileSync(path.join(results, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(`\n${sideBySide(summaries.ring0, summaries.baseline)}\n`);
  if (comparison.regressions.length > 0) {
    process.stdout.write(
      `\npassed on the baseline, failed through Ring0 (${comparison.regressions.length}):\n`,
    );
    for (const testCase of comparison.regressions) {
      process.stdout.write(`  ${testCase.name}\n    ${testCase.failure ?? ""}\n`);
    }
  }
  process.stdout.write(`\nsummary: ${path.join(results, "summary.json")} · ${summary.minutes} min\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
}
