/**
 * The local super cluster from the command line:
 *   npm run cluster:up [-- --nodes N] [--real-nodes R]
 *                                       start (or reuse) it with N simulated nodes (default 3) and R
 *                                       real ones (this host's kubelets; default 1 where the host can,
 *                                       see server/cluster/real-node); builds the binaries if missing
 *   npm run cluster:down                delete it and every local tenant control plane, with their state
 *   npm run cluster:status              running?, server, nodes, version
 * State lives in $RING0_STATE_DIR (default .ring0): kubeconfig at <state>/super-cluster.kubeconfig,
 * kwokctl's work dir at <state>/kwok.
 */
import path from "node:path";
import { localSuperCluster } from "@/server/cluster/local";
import { defaultRealNodes } from "@/server/cluster/real-node/host";
import { MAX_REAL_NODES } from "@/server/cluster/real-node/plan";
import { createLogger } from "@/server/logger";
import { removeLocalWorld } from "@/server/runtime/local-world";

function usage(): never {
  process.stderr.write("usage: tsx scripts/cluster.ts up [--nodes N] [--real-nodes R] | down | status\n");
  process.exit(2);
}

function parseCount(args: string[], flag: string, max: number): number | undefined {
  const at = args.indexOf(flag);
  if (at < 0) return undefined;
  const value = Number(args[at + 1]);
  if (!Number.isInteger(value) || value < 0 || value > max) {
    process.stderr.write(`${flag} needs a whole number from 0 to ${max}, got "${args[at + 1] ?? ""}"\n`);
    process.exit(2);
  }
  return value;
}

/** --real-nodes as given; else one where this host can run it, none (with the reason) where not. */
function realNodesWanted(args: string[], out: (line: string) => void): number {
  const given = parseCount(args, "--real-nodes", MAX_REAL_NODES);
  if (given !== undefined) return given;
  const { count, problems } = defaultRealNodes();
  if (problems.length > 0)
    out(`No real node on this host (simulated nodes only):\n  - ${problems.join("\n  - ")}`);
  return count;
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
      const result = await cluster.up({
        nodes: parseCount(args, "--nodes", 5000) ?? 3,
        realNodes: realNodesWanted(args, out),
      });
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
      out(
        `  nodes:      ${status.nodes ?? "?"}${status.realNodes !== undefined ? ` (${status.realNodes} real, ${status.simulatedNodes} simulated)` : ""}`,
      );
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
