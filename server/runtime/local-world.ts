/**
 * Tearing down the local world: every local tenant control plane (processes, ports, files), then
 * the local super cluster. Used by `npm run cluster:down` and the e2e teardown, so nothing Ring0
 * started keeps running. Tenant control planes outlive Ring0 itself on purpose (adopted on restart).
 */
import fs from "node:fs";
import { localSuperCluster } from "@/server/cluster/local";
import { nodeAgentPidFile } from "@/server/cluster/real-node/plan";
import { clearTearingDown, markTearingDown } from "@/server/cluster/teardown";
import type { Logger } from "@/server/logger";
import { createLocalProvisioner } from "@/server/provisioners/local";

export async function removeLocalWorld(stateDir: string, logger: Logger): Promise<{ tenants: string[] }> {
  // A Ring0 still running must not start again what goes away here.
  markTearingDown(stateDir);
  try {
    await stopNodeAgent(stateDir, logger);
    const provisioner = createLocalProvisioner({ stateDir, logger });
    const tenants = await provisioner.list();
    for (const tenant of tenants) await provisioner.destroy(tenant);
    await localSuperCluster({ stateDir, logger }).down();
    return { tenants };
  } finally {
    clearTearingDown(stateDir);
  }
}

/** The pid of the node agent `./ring0 install` left running for this world (scripts/node-agent.ts), if it runs. */
export function runningNodeAgent(stateDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(nodeAgentPidFile(stateDir), "utf8").trim());
    if (!Number.isInteger(pid) || pid <= 1) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** Stops that node agent, if it runs, and forgets its pid. */
async function stopNodeAgent(stateDir: string, logger: Logger): Promise<void> {
  const pid = runningNodeAgent(stateDir);
  if (pid !== undefined) {
    process.kill(pid, "SIGTERM");
    for (let waited = 0; runningNodeAgent(stateDir) !== undefined && waited < 10_000; waited += 100)
      await new Promise((resolve) => setTimeout(resolve, 100));
    if (runningNodeAgent(stateDir) !== undefined) process.kill(pid, "SIGKILL");
    logger.info("the node agent of Ring0 installed in the local world stopped", { pid });
  }
  fs.rmSync(nodeAgentPidFile(stateDir), { force: true });
}
