/**
 * Running kwokctl, as every kwokctl cluster Ring0 runs does — the local super cluster (./local.ts)
 * and the local tenant control planes (server/provisioners/local/): the Kubernetes binaries of
 * scripts/kube-build.sh and kwokctl's isolated environment. What it is configured with is
 * ./kwokctl-config.ts; its ports come from ./ports.ts and its processes are found by ./process.ts.
 */
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "@/server/logger";
import { CommandError, type RunResult, run } from "./process";

const BUILD_TIMEOUT_MS = 90 * 60_000;

function repoRoot(): string {
  return process.cwd();
}

/** The bin dir of a Go build script (scripts/*-build.sh), building when allowed; progress goes to the logger. */
async function builtBinaries(
  logger: Logger,
  build: { script: string; what: string; npmScript: string },
  options: { build?: boolean },
): Promise<string> {
  const script = path.join(repoRoot(), "scripts", build.script);
  try {
    const printed = await run("bash", [script, "--print-dir"], { timeoutMs: 60_000 });
    return printed.stdout.trim().split("\n").pop() ?? "";
  } catch (error) {
    if (!(error instanceof CommandError) || error.result.code !== 3) throw error;
    if (options.build === false) {
      throw new Error(`${build.what} are not built yet: run \`npm run ${build.npmScript}\` (${script})`);
    }
  }
  logger.info(`building ${build.what} with scripts/${build.script} (minutes when cold)`);
  const built = await run("bash", [script], {
    timeoutMs: BUILD_TIMEOUT_MS,
    onLine: (line) => logger.info(line, { component: build.script.replace(/\.sh$/, "") }),
  });
  const binDir = built.stdout.trim().split("\n").pop() ?? "";
  if (!binDir || !fs.existsSync(binDir))
    throw new Error(`scripts/${build.script} did not print a bin dir (got "${binDir}")`);
  return binDir;
}

/** The bin dir of scripts/kube-build.sh, building when allowed. */
export function kubeBinaries(logger: Logger, options: { build?: boolean } = {}): Promise<string> {
  return builtBinaries(
    logger,
    { script: "kube-build.sh", what: "Kubernetes binaries", npmScript: "kube:build" },
    options,
  );
}

/** The bin dir of scripts/sandbox-build.sh (gVisor's runsc and its containerd shim), building when allowed. */
export function sandboxBinaries(logger: Logger, options: { build?: boolean } = {}): Promise<string> {
  return builtBinaries(
    logger,
    { script: "sandbox-build.sh", what: "gVisor's binaries", npmScript: "sandbox:build" },
    options,
  );
}

/** The bin dir of scripts/netpol-build.sh (kube-router, the NetworkPolicy enforcer), building when allowed. */
export function netpolBinaries(logger: Logger, options: { build?: boolean } = {}): Promise<string> {
  return builtBinaries(
    logger,
    { script: "netpol-build.sh", what: "kube-router", npmScript: "netpol:build" },
    options,
  );
}

/**
 * kwokctl and everything it forks get this environment and nothing else from ours: no host secrets
 * reach simulated containers, and kwokctl reads only its own config under its work dir.
 */
export function kwokctlEnv(workDir: string, binDir: string): Record<string, string> {
  return {
    PATH: `${binDir}:/usr/local/bin:/usr/bin:/bin`,
    HOME: path.join(workDir, "home"),
    TMPDIR: path.join(workDir, "tmp"),
    KWOK_WORKDIR: workDir,
    KWOK_RUNTIME: "binary",
    KWOK_KUBE_BINARY_PREFIX: binDir,
    KWOK_BINARY_PREFIX: binDir,
    KWOK_KUBECTL_BINARY: path.join(binDir, "kubectl"),
    LANG: "C.UTF-8",
  };
}

export interface KwokctlCluster {
  /** kwokctl's work dir (KWOK_WORKDIR). */
  workDir: string;
  /** Cluster name (`--name`). */
  name: string;
  /** The KwokctlConfiguration passed as `--config`. */
  configPath: string;
}

/** Run `kwokctl --name <name> --config <config> args…` from `binDir` in the cluster's isolated env. */
export async function runKwokctl(
  cluster: KwokctlCluster,
  binDir: string,
  args: string[],
  options: { timeoutMs: number; logger: Logger },
): Promise<RunResult> {
  fs.mkdirSync(path.join(cluster.workDir, "home"), { recursive: true });
  fs.mkdirSync(path.join(cluster.workDir, "tmp"), { recursive: true });
  return run(
    path.join(binDir, "kwokctl"),
    ["--name", cluster.name, "--config", cluster.configPath, ...args],
    {
      env: kwokctlEnv(cluster.workDir, binDir),
      cwd: cluster.workDir,
      timeoutMs: options.timeoutMs,
      onLine: (line) => options.logger.debug(line, { component: "kwokctl" }),
    },
  );
}
