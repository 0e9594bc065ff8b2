/** `kubectl get ns` through the gateway against directly, each arm with its own (warm) discovery cache. */
import fs from "node:fs";
import path from "node:path";
import { kubeconfigFromAccess } from "@/server/provisioners/types";
import { kubectl } from "../lib/clients";
import { ratio, say, summary } from "../lib/figures";
import { writeTokenKubeconfig } from "../lib/gateway";
import { type Arm, type GatewayWorld, order } from "./world";

export async function measureKubectlGetNs(
  world: GatewayWorld,
  root: string,
  kubectlBinary: string,
  n: number,
) {
  const kubeconfigs = {
    gateway: writeTokenKubeconfig(
      path.join(root, "gateway.kubeconfig"),
      world.arms.gateway.base,
      world.gateway.ca,
      world.token,
    ),
    direct: path.join(root, "direct.kubeconfig"),
  };
  fs.writeFileSync(kubeconfigs.direct, kubeconfigFromAccess(world.access, "direct"), { mode: 0o600 });
  const getNs = async (arm: Arm): Promise<number> => {
    const started = performance.now();
    const result = await kubectl(kubectlBinary, kubeconfigs[arm], path.join(root, "kubectl", arm, "cache"), [
      "get",
      "ns",
    ]);
    const elapsed = performance.now() - started;
    if (result.code !== 0 || !/\bdefault\b/.test(result.stdout))
      throw new Error(`kubectl get ns via ${arm} failed: ${result.stderr}`);
    return elapsed;
  };
  for (let i = 0; i < 2; i++) for (const arm of order(i)) await getNs(arm);
  const samples = { gateway: [] as number[], direct: [] as number[] };
  for (let i = 0; i < n; i++) for (const arm of order(i)) samples[arm].push(await getNs(arm));
  const result = {
    gateway: summary(samples.gateway, 1),
    direct: summary(samples.direct, 1),
    ratioP50: ratio(summary(samples.gateway, 1).p50, summary(samples.direct, 1).p50),
    ratioP95: ratio(summary(samples.gateway, 1).p95, summary(samples.direct, 1).p95),
  };
  say(`kubectl get ns: ${JSON.stringify(result)}`);
  return result;
}
