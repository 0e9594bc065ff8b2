import { partsStarting, type StartPart, startPart, stillStartingMessage } from "@/server/core/start-state";
import { databaseProblem, pingDb } from "@/server/db/client";
import { env } from "@/server/env";
import { clusterHealth, getSuperCluster } from "@/server/k8s/cluster";
import { superClusterHealing, superClusterProblem } from "@/server/k8s/super-cluster-state";

export interface DependencyStatus {
  name: string;
  ok: boolean;
  latencyMs: number;
  detail?: string;
}

export interface Readiness {
  /** "starting": only parts that start behind the listening server are not up yet. */
  status: "ready" | "starting" | "not-ready";
  dependencies: DependencyStatus[];
  /** The parts still starting (server/core/start-state.ts), in start order. */
  starting: StartPart[];
}

const timeoutMs = 2_000;

async function probe(name: string, check: () => Promise<string | undefined>): Promise<DependencyStatus> {
  const started = performance.now();
  try {
    const detail = await Promise.race([
      check(),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs),
      ),
    ]);
    return {
      name,
      ok: true,
      latencyMs: Math.round(performance.now() - started),
      ...(detail ? { detail } : {}),
    };
  } catch (error) {
    return {
      name,
      ok: false,
      latencyMs: Math.round(performance.now() - started),
      detail: error instanceof Error ? error.message : String(error),
    };
  }
}

/** Ready when every dependency is; starting when only parts still starting are down. */
export function overallStatus(
  dependencies: DependencyStatus[],
  starting: readonly string[],
): Readiness["status"] {
  const down = dependencies.filter((dependency) => !dependency.ok);
  if (down.length === 0) return "ready";
  return down.every((dependency) => starting.includes(dependency.name)) ? "starting" : "not-ready";
}

/** Probes every dependency concurrently; each reports alone so one outage names itself. */
export async function readiness(): Promise<Readiness> {
  const config = env();
  const dependencies = await Promise.all([
    probe("database", async () => {
      const problem = databaseProblem();
      if (problem) throw new Error(problem);
      await pingDb();
      return undefined;
    }),
    probe("iam", async () => {
      if (!config.OIDC_ISSUER) throw new Error("no OIDC issuer configured");
      const response = await fetch(
        `${config.OIDC_ISSUER.replace(/\/$/, "")}/.well-known/openid-configuration`,
        {
          signal: AbortSignal.timeout(timeoutMs),
        },
      );
      if (!response.ok) throw new Error(`discovery answered HTTP ${response.status}`);
      return config.OIDC_ISSUER;
    }),
    probe("super-cluster", async () => {
      const starting = stillStartingMessage("super-cluster");
      if (starting) throw new Error(starting);
      const cluster = getSuperCluster();
      // A part of it being healed is what operators need to read, whatever a probe says.
      const healing = superClusterHealing();
      if (healing) throw new Error(healing);
      if (!cluster) {
        const problem = superClusterProblem();
        if (problem) throw new Error(problem);
        if (!config.SUPER_KUBECONFIG && config.RING0_SUPER_CLUSTER === "off")
          return "disabled (RING0_SUPER_CLUSTER=off)";
        throw new Error("not connected yet");
      }
      const health = await clusterHealth(cluster);
      if (!health.ok) throw new Error(`${cluster.server}: ${health.detail}`);
      return cluster.server;
    }),
    probe("tenants", async () => {
      const part = startPart("tenants");
      if (part?.state === "starting") throw new Error(stillStartingMessage("tenants"));
      if (part?.state === "failed") throw new Error(part.detail ?? "the tenants' runtime failed to start");
      return part ? undefined : "not started in this process";
    }),
  ]);
  const starting = partsStarting();
  return { status: overallStatus(dependencies, starting), dependencies, starting };
}
