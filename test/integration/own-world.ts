/**
 * The end of a suite's own super cluster (one with real nodes, made in a temporary state dir): the
 * cluster down, any process still naming the state dir killed, the dir and the suite's other
 * temporary dirs removed. Nothing throws: a teardown must finish.
 */
import fs from "node:fs";
import type { LocalSuperCluster } from "@/server/cluster/local";
import { killProcessesMentioning } from "@/server/cluster/process";

export async function removeOwnWorld(
  cluster: LocalSuperCluster | undefined,
  stateDir: string,
  ...otherDirs: string[]
): Promise<void> {
  await cluster?.down().catch(() => undefined);
  await killProcessesMentioning(stateDir);
  for (const dir of [stateDir, ...otherDirs]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
