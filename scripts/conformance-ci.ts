/**
 * The conformance subset CI runs (issue 17): the recorded list of upstream [Conformance] specs that
 * pass through Ring0 (test/conformance/ci.json), run through the kube gateway against a tenant of a
 * Ring0 instance of its own — production build, embedded PostgreSQL and IAM, a local super cluster
 * with a real node, the seed tenants — and failing on any of them that no longer passes:
 *
 *   npm run conformance:ci            (the test command runs it after the browser suites)
 *
 * The specs cover API machinery (CRDs, watch, field validation, namespaces, ConfigMaps, Secrets,
 * service accounts, RBAC-visible behaviour, admission policies) and, on the real node, pods, exec,
 * logs and termination messages. The full run, with its baseline, is `npm run conformance`. The
 * tally (passed / failed / skipped) goes to `bench/results/conformance-ci/tally.json` for the test
 * command's closing line; JUnit and log to `bench/results/conformance-ci/ring0/`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { realNodePrerequisites } from "@/server/cluster/real-node/host";
import { connectCluster } from "@/server/k8s/cluster";
import { kubeRequestText } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { tenantApiVersion } from "@/server/tenants/tenant-resources";
import { instanceEnvironment } from "@/test/instance";
import { checkRecorded, focusOf, parseJUnit, type RecordedList } from "./lib/conformance-report";

const port = Number(process.env.RING0_CONFORMANCE_PORT ?? 3400);
const stateDir = path.resolve(".ring0/conformance-ci");
const results = path.resolve("bench/results/conformance-ci");
const listFile = path.resolve("test/conformance/ci.json");
const tenant = "acme";

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

function writeTally(tally: { passed: number; failed: number; skipped: number }): void {
  fs.mkdirSync(results, { recursive: true });
  fs.writeFileSync(path.join(results, "tally.json"), `${JSON.stringify(tally)}\n`);
}

async function main(): Promise<number> {
  const list = JSON.parse(fs.readFileSync(listFile, "utf8")) as RecordedList;
  fs.rmSync(results, { recursive: true, force: true });
  const problems = realNodePrerequisites();
  if (problems.length > 0) throw new Error(`this host cannot run a real node: ${problems.join("; ")}`);

  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    ...instanceEnvironment({ port, stateDir, logLevel: "error" }),
    RING0_REAL_NODES: "1",
  };
  const started = Date.now();
  fs.rmSync(stateDir, { recursive: true, force: true });
  let server: ChildProcess | undefined;
  let log = "";
  try {
    say(`▶ a Ring0 instance of its own (${stateDir}, port ${port}) with a real node`);
    server = spawn(path.resolve("node_modules/.bin/tsx"), ["server.ts"], {
      stdio: ["ignore", "ignore", "pipe"],
      env: environment,
    });
    server.stderr?.on("data", (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4000);
    });
    const running = server;
    await until("Ring0 answers /api/health", 360_000, async () => {
      if (running.exitCode !== null) throw new Error(`Ring0 exited (${running.exitCode}): ${log}`);
      return (await fetch(`http://localhost:${port}/api/health`)).ok ? true : undefined;
    }).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${log}`);
    });
    const superCluster = connectCluster("conformance-ci", {
      file: path.join(stateDir, "super-cluster.kubeconfig"),
    });
    await until(`tenant ${tenant} Ready`, 300_000, async () => {
      const read = await kubeRequestText(superCluster, {
        path: `/apis/${tenantApiVersion}/tenants/${tenant}`,
      });
      const status = (
        JSON.parse(read.text) as { status?: { conditions?: { type: string; status: string }[] } }
      ).status;
      return status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? true : undefined;
    });
    say(`  ready in ${Math.round((Date.now() - started) / 1000)} s; ${list.specs.length} recorded specs`);

    const code = await new Promise<number>((resolve) => {
      const child = spawn(
        path.resolve("node_modules/.bin/tsx"),
        [
          "scripts/conformance.ts",
          "--tenant",
          tenant,
          "--only",
          "ring0",
          "--procs",
          "2",
          "--focus",
          focusOf(list.specs),
          "--results",
          results,
        ],
        { stdio: ["ignore", "inherit", "inherit"], env: environment },
      );
      child.on("exit", (exitCode) => resolve(exitCode ?? 1));
      child.on("error", () => resolve(127));
    });
    const reportDir = path.join(results, "ring0");
    const reports = fs.existsSync(reportDir)
      ? fs.readdirSync(reportDir).filter((file) => /^junit.*\.xml$/.test(file))
      : [];
    if (code !== 0 || reports.length === 0) throw new Error(`the conformance run failed (exit ${code})`);
    const cases = reports.flatMap((file) => parseJUnit(fs.readFileSync(path.join(reportDir, file), "utf8")));
    const checked = checkRecorded(list, cases);
    for (const name of checked.newlyPassing) say(`  passes now, not recorded yet: ${name}`);
    for (const { name, failure } of checked.regressions) say(`✗ no longer passes: ${name}\n    ${failure}`);
    say(
      `conformance subset: ${checked.tally.passed} passed, ${checked.tally.failed} failed, ${checked.tally.skipped} skipped in ${Math.round((Date.now() - started) / 1000)} s`,
    );
    writeTally(checked.tally);
    return checked.tally.failed > 0 ? 1 : 0;
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server?.once("exit", resolve));
      server.kill("SIGTERM");
      await exited;
    }
    await removeLocalWorld(stateDir, createLogger({ service: "conformance-ci" }, "warn"));
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`conformance subset: ${error instanceof Error ? error.message : String(error)}\n`);
    writeTally({ passed: 0, failed: 1, skipped: 0 });
    process.exit(1);
  },
);
