import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createObject, type KubeObject } from "@/server/k8s/apply";
import { eventually, testNamespace, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { KWOK_EXEC_LABEL, kwokDebugPaths, startKwokDebugBinder } from "./kwok-debug";
import { localSuperCluster } from "./local";
import { localNodeName } from "./nodes";
import { CommandError, run } from "./process";

const conn = testSuperCluster();
const stateDir = inject("superStateDir");
const kubeconfig = inject("superKubeconfig");
const logger = createLogger({}, "warn");
let kubectl = "";
let namespace = "";
let cleanup: () => Promise<void> = async () => {};
let binder: ReturnType<typeof startKwokDebugBinder>;

const pod = (name: string, labelled: boolean): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace, labels: labelled ? { [KWOK_EXEC_LABEL]: "true" } : { app: "plain" } },
  spec: { nodeName: localNodeName(0), containers: [{ name: "app", image: "registry.invalid/app:1" }] },
});

async function running(name: string) {
  await eventually(async () => {
    const current = await kubeRequest<{ status?: { phase?: string } }>(conn, {
      path: `/api/v1/namespaces/${namespace}/pods/${name}`,
    });
    return current.status?.phase === "Running";
  }, 30_000);
}

beforeAll(async () => {
  kubectl = await localSuperCluster({ stateDir, logger }).kubectlPath();
  [namespace, cleanup] = await testNamespace(conn, "kwok-exec");
  binder = startKwokDebugBinder(conn, { stateDir, logger });
});

afterAll(async () => {
  binder?.stop();
  await cleanup();
});

describe("the local super cluster", () => {
  it("reports itself running with its nodes and version", async () => {
    const status = await localSuperCluster({ stateDir, logger }).status();
    expect(status).toMatchObject({ running: true, kubeconfig, server: conn.server });
    expect(status.version).toMatch(/^v1\.36\./);
    expect(status.nodes).toBeGreaterThanOrEqual(3);
  });

  it("reuses the running cluster on a second up", async () => {
    const again = await localSuperCluster({ stateDir, logger }).up({ nodes: 3 });
    expect(again).toEqual({ kubeconfig, server: conn.server, created: false });
  });

  it("serves kubectl logs and a scoped kubectl exec for labelled pods only", {
    timeout: 90_000,
  }, async () => {
    await createObject(conn, pod("shell", true));
    await createObject(conn, pod("plain", false));
    await running("shell");
    await running("plain");
    const paths = kwokDebugPaths(stateDir, namespace, "shell");
    const kubectlArgs = ["--kubeconfig", kubeconfig, "-n", namespace];

    const logs = await eventually(async () => {
      const result = await run(kubectl, [...kubectlArgs, "logs", "shell"], { timeoutMs: 20_000 });
      return result.stdout.includes("simulated pod") ? result.stdout : undefined;
    }, 30_000);
    expect(logs).toContain(`simulated pod ${namespace}/shell started on ${localNodeName(0)}`);

    const exec = await eventually(async () => {
      const result = await run(
        kubectl,
        [...kubectlArgs, "exec", "shell", "--", "sh", "-c", "pwd; env | sort"],
        {
          timeoutMs: 20_000,
        },
      );
      return result.stdout;
    }, 30_000);
    const [workDir, ...environment] = exec.trim().split("\n");
    expect(workDir).toBe(paths.workDir);
    expect(environment).toContain(`POD_NAME=shell`);
    expect(environment).toContain(`HOME=${paths.workDir}`);
    // Nothing of the test runner's own environment leaks into the simulated container.
    const leaked = environment.filter((line) =>
      /^(DATABASE_URL|NODE_OPTIONS|npm_|VITEST|AWS_|GITHUB_)/.test(line),
    );
    expect(leaked).toEqual([]);

    const refused = await run(kubectl, [...kubectlArgs, "exec", "plain", "--", "pwd"], {
      timeoutMs: 20_000,
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CommandError);
    expect((refused as CommandError).result.stderr).toMatch(/no exec found|not found/i);
  });
});
