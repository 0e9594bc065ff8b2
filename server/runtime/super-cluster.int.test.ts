import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { setDatabaseUrl } from "@/server/db/client";
import { parseEnv } from "@/server/env";
import { readiness } from "@/server/health/readiness";
import { getSuperCluster, setSuperCluster } from "@/server/k8s/cluster";
import { superClusterProblem } from "@/server/k8s/super-cluster-state";
import { unreachableKubeconfig } from "@/server/k8s/test-cluster";
import { createLogger } from "@/server/logger";
import { testDatabaseUrl } from "@/test/integration/database";
import { connectSuperCluster } from "./super-cluster";

const logger = createLogger({}, "error");
let stateDir: string;
const saved = { ...process.env };

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-super-"));
  setDatabaseUrl(await testDatabaseUrl());
  return () => fs.rmSync(stateDir, { recursive: true, force: true });
});

afterEach(() => {
  process.env = { ...saved };
  setSuperCluster(null);
});

/** Configuration as the runtime would see it, pointing readiness at nothing but the super cluster. */
function configWith(variables: Record<string, string>) {
  Object.assign(process.env, { RING0_STATE_DIR: stateDir, OIDC_ISSUER: "", ...variables });
  return parseEnv(process.env);
}

function superClusterDependency(report: Awaited<ReturnType<typeof readiness>>) {
  return report.dependencies.find((dependency) => dependency.name === "super-cluster");
}

describe("connecting the super cluster", () => {
  it("connects SUPER_KUBECONFIG, installs the CRDs and reports ready", async () => {
    const result = await connectSuperCluster(
      configWith({ SUPER_KUBECONFIG: inject("superKubeconfig") }),
      logger,
    );
    expect(result.connection).not.toBeNull();
    expect(getSuperCluster()?.server).toBe(result.connection?.server);
    expect(superClusterProblem()).toBeNull();
    expect(superClusterDependency(await readiness())).toMatchObject({ ok: true });
    result.stop();
  });

  it("reports a missing kubeconfig in one line and as a red dependency, without throwing", async () => {
    const missing = path.join(stateDir, "nope.kubeconfig");
    const result = await connectSuperCluster(configWith({ SUPER_KUBECONFIG: missing }), logger);
    expect(result.connection).toBeNull();
    expect(superClusterProblem()).toContain(missing);
    const report = await readiness();
    expect(report.status).toBe("not-ready");
    expect(superClusterDependency(report)).toMatchObject({
      ok: false,
      detail: expect.stringContaining(missing),
    });
  });

  it("reports an unreachable server as a red dependency naming it", async () => {
    const file = path.join(stateDir, "unreachable.kubeconfig");
    fs.writeFileSync(file, unreachableKubeconfig);
    const result = await connectSuperCluster(configWith({ SUPER_KUBECONFIG: file }), logger);
    expect(superClusterProblem()).toContain("127.0.0.1:9");
    expect(superClusterDependency(await readiness())).toMatchObject({
      ok: false,
      detail: expect.stringContaining("127.0.0.1:9"),
    });
    result.stop();
  });
});
