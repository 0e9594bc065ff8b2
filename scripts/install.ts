/**
 * Ring0 into the running local world by its Helm chart, in one command:
 *   ./ring0 install [--port 3000] [--gateway-port 3443]
 *   ./ring0 install --uninstall
 * The local world must be up with a real node (`npm run cluster:up -- --real-nodes 1`), and no
 * Ring0 of the host's own running against it (both would lead the same Tenants). In order:
 *   1. the node's part, as a process of its own that outlives this command (scripts/node-agent.ts:
 *      the tenant wall, volumes, the super cluster's API for Ring0's pods, and 127.0.0.1:<port> and
 *      :<gateway-port> leading to Ring0's Service); `npm run cluster:down` stops it;
 *   2. the images (`./ring0 images build`: the control planes', Ring0's, PostgreSQL's), pushed into
 *      the world's registry;
 *   3. a PostgreSQL and Ring0's IAM as pods in ring0-system (their passwords made once, kept in
 *      <state>/in-cluster/credentials.json, 0600);
 *   4. `helm upgrade --install ring0 deploy/helm/ring0` with the values this trial needs (run it
 *      again to upgrade to this checkout);
 *   5. both replicas and the vn-agents ready; then it prints the URL, the gateway and the logins.
 * State lives in $RING0_STATE_DIR (default .ring0).
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { localSuperCluster } from "@/server/cluster/local";
import { run } from "@/server/cluster/process";
import { REAL_NODE_LABEL } from "@/server/cluster/real-node/plan";
import { runningRegistryPort } from "@/server/cluster/real-node/registry";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { runningNodeAgent } from "@/server/runtime/local-world";
import { NODE_AGENT_SELECTOR } from "@/server/vn-agent/node-agents";
import {
  inClusterDir,
  isReady,
  livePods,
  RING0_NAMESPACE,
  RING0_RELEASE,
  SERVER_SELECTOR,
  trialDependencies,
  trialValues,
} from "./lib/local-install";

const USAGE = "usage: ./ring0 install [--port 3000] [--gateway-port 3443] | ./ring0 install --uninstall\n";
const DEMO_PASSWORD = "ring0-demo";

function fail(message: string, code = 1): never {
  process.stderr.write(message.endsWith("\n") ? message : `${message}\n`);
  process.exit(code);
}

const say = (line: string) => process.stderr.write(`ring0 install: ${line}\n`);

function port(args: string[], flag: string, fallback: number): number {
  const index = args.indexOf(flag);
  if (index < 0) return fallback;
  const value = Number(args[index + 1]);
  if (!Number.isInteger(value) || value < 1024 || value > 65535)
    fail(`${flag} takes a port from 1024 to 65535, not ${args[index + 1] ?? "nothing"}\n${USAGE}`, 2);
  return value;
}

/** Starts the node agent (detached, its log in <state>/in-cluster/node-agent.log) and waits until it serves. */
async function ensureNodeAgent(
  stateDir: string,
  ports: { port: number; gatewayPort: number },
): Promise<void> {
  if (runningNodeAgent(stateDir) !== undefined) return;
  const logFile = path.join(inClusterDir(stateDir), "node-agent.log");
  const log = fs.openSync(logFile, "a", 0o600);
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "scripts/node-agent.ts", String(ports.port), String(ports.gatewayPort)],
    {
      detached: true,
      stdio: ["ignore", log, log],
      env: { ...process.env, RING0_STATE_DIR: stateDir },
    },
  );
  child.unref();
  fs.closeSync(log);
  const deadline = Date.now() + 60_000;
  while (runningNodeAgent(stateDir) === undefined) {
    if (child.exitCode !== null || Date.now() > deadline)
      fail(
        `the node agent did not start; its log (${logFile}):\n${fs.readFileSync(logFile, "utf8").slice(-2000)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Passwords made once for this world and kept (an upgrade keeps the database's). */
function credentials(stateDir: string): { databasePassword: string; clientSecret: string } {
  const file = path.join(inClusterDir(stateDir), "credentials.json");
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as { databasePassword: string; clientSecret: string };
  } catch {
    const made = {
      databasePassword: randomBytes(18).toString("base64url"),
      clientSecret: randomBytes(32).toString("base64url"),
    };
    fs.writeFileSync(file, `${JSON.stringify(made, null, 2)}\n`, { mode: 0o600 });
    return made;
  }
}

/** How many of the pods a selector picks are ready, and one that keeps exiting, if any. */
async function readiness(
  conn: ClusterConnection,
  selector: string,
): Promise<{ ready: number; crashing?: string }> {
  const live = await livePods(conn, selector);
  return {
    ready: live.filter(isReady).length,
    crashing: live.find((pod) => (pod.status?.containerStatuses ?? []).some((s) => s.restartCount >= 3))
      ?.metadata.name,
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  for (const arg of args)
    if (arg.startsWith("-") && !["--port", "--gateway-port", "--uninstall"].includes(arg))
      fail(`unknown option ${arg}\n${USAGE}`, 2);
  const stateDir = path.resolve(process.env.RING0_STATE_DIR ?? ".ring0");
  const logger = createLogger(
    { service: "ring0-install" },
    process.env.LOG_LEVEL === "debug" ? "debug" : "warn",
  );
  const cluster = localSuperCluster({ stateDir, logger });
  if (!(await cluster.status()).running)
    fail(
      "the local world is not running: start it with a real node first (npm run cluster:up -- --real-nodes 1)",
    );
  const conn = cluster.connect();
  const kubectl = await cluster.kubectlPath();
  const printed = await run("bash", ["scripts/helm-build.sh"], { timeoutMs: 30 * 60_000 });
  const helm = path.join(printed.stdout.trim().split("\n").pop() ?? "", "helm");
  const helmEnv = { ...process.env, KUBECONFIG: path.join(stateDir, "super-cluster.kubeconfig") };

  if (args.includes("--uninstall")) {
    const result = spawnSync(helm, ["uninstall", RING0_RELEASE, "--namespace", RING0_NAMESPACE, "--wait"], {
      stdio: "inherit",
      env: helmEnv,
    });
    process.exit(result.status ?? 1);
  }
  const ports = { port: port(args, "--port", 3000), gatewayPort: port(args, "--gateway-port", 3443) };

  const nodes = await kubeRequest<{
    items: {
      metadata: { labels?: Record<string, string> };
      status?: { conditions?: { type: string; status: string }[] };
    }[];
  }>(conn, { path: "/api/v1/nodes" });
  const realReady = nodes.items.some(
    (node) =>
      node.metadata.labels?.[REAL_NODE_LABEL] === "true" &&
      node.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True"),
  );
  if (!realReady)
    fail(
      "the local world has no Ready real node: Ring0's pods need one (npm run cluster:up -- --real-nodes 1)",
    );
  const binDir = await kubeBinaries(logger, { build: false });
  if (runningRegistryPort(stateDir, binDir) === undefined)
    fail("the local world's image registry is not running (it runs with the real nodes)");

  fs.mkdirSync(inClusterDir(stateDir), { recursive: true, mode: 0o700 });
  say(
    "the node's part (tenant wall, volumes, the super cluster's API for Ring0's pods, ports on 127.0.0.1)…",
  );
  await ensureNodeAgent(stateDir, ports);

  say("images (./ring0 images build)…");
  const images = spawnSync("npm", ["run", "--silent", "images", "--", "build"], {
    stdio: ["ignore", 2, 2],
    env: { ...process.env, RING0_STATE_DIR: stateDir },
  });
  if (images.status !== 0) fail("building or pushing the images failed (above)");
  const version = (JSON.parse(fs.readFileSync("package.json", "utf8")) as { version: string }).version;

  say("PostgreSQL and Ring0's IAM as pods…");
  const { databasePassword, clientSecret } = credentials(stateDir);
  const publicUrl = `http://localhost:${ports.port}`;
  const gatewayUrl = `https://localhost:${ports.gatewayPort}`;
  const { databaseUrl, issuer } = await trialDependencies(conn, {
    postgresImage: "localhost/ring0/postgres:18.4",
    ring0Image: `localhost/ring0/ring0:${version}`,
    databasePassword,
    clientSecret,
    publicUrl,
  });

  say("helm upgrade --install…");
  const kubeletCaFile = path.join(inClusterDir(stateDir), "kubelet-ca.crt");
  fs.writeFileSync(kubeletCaFile, (await cluster.kubeletClient()).ca);
  const started = Date.now();
  const install = spawnSync(
    helm,
    [
      "upgrade",
      "--install",
      RING0_RELEASE,
      path.resolve("deploy/helm/ring0"),
      "--namespace",
      RING0_NAMESPACE,
      ...trialValues({
        image: "localhost/ring0/ring0",
        tag: version,
        publicUrl,
        gatewayUrl,
        databaseUrl,
        issuer,
        clientSecret,
        kubeletCaFile,
      }),
    ],
    { stdio: ["ignore", 2, 2], env: helmEnv },
  );
  if (install.status !== 0) fail("helm upgrade --install failed (above)");

  say("waiting for both replicas and the vn-agents…");
  const deadline = Date.now() + 300_000;
  for (;;) {
    const servers = await readiness(conn, SERVER_SELECTOR);
    const agents = await readiness(conn, NODE_AGENT_SELECTOR);
    if (servers.ready >= 2 && agents.ready >= 1) break;
    const crashing = servers.crashing ?? agents.crashing;
    if (crashing || Date.now() > deadline)
      fail(
        `${crashing ? `${crashing} keeps exiting` : "not ready within 300 s"}: kubectl --kubeconfig ${helmEnv.KUBECONFIG} -n ${RING0_NAMESPACE} get pods; … logs <pod>`,
      );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  process.stdout.write(
    [
      `Ring0 runs in the local super cluster (2 replicas, ready ${seconds} s after helm upgrade --install):`,
      `  panel:    ${publicUrl}`,
      `  gateway:  ${gatewayUrl} (kubeconfigs from the portal carry its CA)`,
      `  sign in with the IAM pod's demo accounts (password ${DEMO_PASSWORD}): operator, acme-admin, globex-admin`,
      "  (no tenant exists yet: the operator creates them in the console; their control planes run as pods)",
      `  pods:     ${kubectl} --kubeconfig ${helmEnv.KUBECONFIG} -n ${RING0_NAMESPACE} get pods`,
      "  upgrade:  ./ring0 install (again, from the checkout you want)",
      "  remove:   ./ring0 install --uninstall; npm run cluster:down also stops the node's part",
      "",
    ].join("\n"),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`ring0 install: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
