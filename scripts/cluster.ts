/**
 * The local super cluster from the command line:
 *   npm run cluster:up [-- --nodes N]   start (or reuse) it; builds the Kubernetes binaries if missing
 *   npm run cluster:down                delete it and every local tenant control plane, with their state
 *   npm run cluster:status              running?, server, nodes, version
 * State lives in $RING0_STATE_DIR (default .ring0): kubeconfig at <state>/super-cluster.kubeconfig,
 * kwokctl's work dir at <state>/kwok.
 */
import path from "node:path";
import { localSuperCluster } from "@/server/cluster/local";
import { createLogger } from "@/server/logger";
import { removeLocalWorld } from "@/server/runtime/local-world";

function usage(): never {
  process.stderr.write("usage: tsx scripts/cluster.ts up [--nodes N] | down | status\n");
  process.exit(2);
}

function parseNodes(args: string[]): number {
  const at = args.indexOf("--nodes");
  if (at < 0) return 3;
  const value = Number(args[at + 1]);
  if (!Number.isInteger(value) || value < 0 || value > 5000) {
    process.stderr.write(`--nodes needs a whole number from 0 to 5000, got "${args[at + 1] ?? ""}"\n`);
    process.exit(2);
  }
  return value;
}

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  const stateDir = path.resolve(process.env.RING0_STATE_DIR ?? ".ring0");
  const logger = createLogger(
    { service: "ring0-cluster" },
    process.env.LOG_LEVEL === "debug" ? "debug" : "info",
  );
  const cluster = localSuperCluster({ stateDir, logger });
  const out = (line: string) => process.stdout.write(`${line}\n`);

  switch (command) {
    case "up": {
      const started = performance.now();
      const result = await cluster.up({ nodes: parseNodes(args) });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      out(`${result.created ? "Created" : "Reused"} the local super cluster in ${seconds} s`);
      out(`  server:     ${result.server}`);
      out(`  kubeconfig: ${result.kubeconfig}`);
      out(`Try: kubectl --kubeconfig ${result.kubeconfig} get nodes -L topology.kubernetes.io/zone`);
      break;
    }
    case "down": {
      const { tenants } = await removeLocalWorld(stateDir, logger);
      if (tenants.length > 0)
        out(`Removed ${tenants.length} local tenant control plane(s): ${tenants.join(", ")}`);
      out(`The local super cluster in ${stateDir} is gone.`);
      break;
    }
    case "status": {
      const status = await cluster.status();
      if (!status.running) {
        out(
          `not running${status.kubeconfig ? ` (kubeconfig ${status.kubeconfig})` : ""} — start it with npm run cluster:up`,
        );
        process.exitCode = 1;
        break;
      }
      out("running");
      out(`  server:     ${status.server}`);
      out(`  version:    ${status.version ?? "?"}`);
      out(`  nodes:      ${status.nodes ?? "?"}`);
      out(`  kubeconfig: ${status.kubeconfig}`);
      out(`Try: kubectl --kubeconfig ${status.kubeconfig} get nodes`);
      break;
    }
    default:
      usage();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`cluster: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
