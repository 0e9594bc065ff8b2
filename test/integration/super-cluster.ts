/**
 * Integration test run setup: ONE local super cluster (kwokctl binary runtime, 3 kwok nodes) per run,
 * in a fresh temporary state dir, from the cached Kubernetes binaries (built by scripts/kube-build.sh
 * when missing — slow once). Tests reach it through inject("superKubeconfig"); teardown deletes the
 * cluster and makes sure none of its processes outlive the run.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { localSuperCluster } from "@/server/cluster/local";
import { killProcessesMentioning } from "@/server/cluster/process";
import { createLogger } from "@/server/logger";

declare module "vitest" {
  export interface ProvidedContext {
    /** Admin kubeconfig of the run's local super cluster. */
    superKubeconfig: string;
    /** State dir of that cluster (kwokctl work dir, kwok exec/log files). */
    superStateDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logger = createLogger({ service: "ring0-test" }, "warn");
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-test-super-"));
  const cluster = localSuperCluster({ stateDir, logger });
  const teardown = async () => {
    try {
      await cluster.down();
    } finally {
      // kwokctl kills what it started; anything left mentioning our state dir is a leak: end it.
      const leaked = await killProcessesMentioning(stateDir);
      if (leaked.length > 0) logger.warn("killed leftover super cluster processes", { pids: leaked });
      fs.rmSync(stateDir, { recursive: true, force: true });
    }
  };
  try {
    const started = await cluster.up({ nodes: 3 });
    project.provide("superKubeconfig", started.kubeconfig);
    project.provide("superStateDir", stateDir);
    return teardown;
  } catch (error) {
    await teardown().catch(() => undefined);
    throw error;
  }
}
