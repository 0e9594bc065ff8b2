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
  status: "ready" | "not-ready";
  dependencies: DependencyStatus[];
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
  ]);
  return { status: dependencies.every((dependency) => dependency.ok) ? "ready" : "not-ready", dependencies };
}
