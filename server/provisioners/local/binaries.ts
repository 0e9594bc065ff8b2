/**
 * The Kubernetes binaries local control planes run on: a bin dir per exact version (tools/kube
 * builds one; tests and benchmarks may name more), never downloaded. An existing cluster is managed
 * with the kwokctl it was started with while that still exists.
 */
import fs from "node:fs";
import path from "node:path";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import type { Logger } from "@/server/logger";
import { availableVersions } from "../versions";
import type { LocalControlPlaneRecord } from "./record";

export function hasKwokctl(binDir: string | undefined): binDir is string {
  return !!binDir && fs.existsSync(path.join(binDir, "kwokctl"));
}

/** Newest first, by numeric version parts. */
export function sortVersionsNewestFirst(versions: string[]): string[] {
  const parts = (version: string) => version.split(".").map((part) => Number.parseInt(part, 10) || 0);
  return [...versions].sort((a, b) => {
    const [left, right] = [parts(a), parts(b)];
    for (let index = 0; index < Math.max(left.length, right.length); index++) {
      const difference = (right[index] ?? 0) - (left[index] ?? 0);
      if (difference !== 0) return difference;
    }
    return 0;
  });
}

export interface LocalBinaries {
  /** The exact versions there are binaries for, newest first. */
  knownVersions(): string[];
  /** The bin dir of `version`; throws, naming the fix, when its kwokctl is missing. */
  binDirFor(version: string): Promise<string>;
  /** The kwokctl to manage an existing cluster with: the one it was started with, while it exists. */
  managingBinDir(record: LocalControlPlaneRecord | undefined): Promise<string | undefined>;
}

export function localBinaries(
  options: { binDir?: string; versions?: Record<string, string> },
  logger: Logger,
): LocalBinaries {
  let defaultBinDir: Promise<string> | undefined;

  const binariesOf = (): Promise<string> => {
    const configured = options.binDir ?? process.env.RING0_KUBE_BIN_DIR;
    if (configured) return Promise.resolve(path.resolve(configured));
    defaultBinDir ??= kubeBinaries(logger, { build: false }).catch((error: unknown) => {
      defaultBinDir = undefined;
      throw error;
    });
    return defaultBinDir;
  };

  return {
    knownVersions: () =>
      options.versions ? sortVersionsNewestFirst(Object.keys(options.versions)) : availableVersions(),

    async binDirFor(version) {
      const binDir = options.versions?.[version] ?? (await binariesOf());
      if (!hasKwokctl(binDir)) {
        throw new Error(
          `the binaries for Kubernetes ${version} are missing (no kwokctl in ${binDir}): run \`npm run kube:build\``,
        );
      }
      return path.resolve(binDir);
    },

    async managingBinDir(record) {
      if (hasKwokctl(record?.binDir)) return record.binDir;
      try {
        return await binariesOf();
      } catch {
        return undefined;
      }
    },
  };
}
