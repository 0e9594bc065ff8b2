import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createObject, type KubeObject } from "@/server/k8s/apply";
import { eventually, testNamespace, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { localSuperCluster } from "./local";
import { localNodeName } from "./nodes";
import { CommandError, run } from "./process";
import { SIMULATED_POD_LABEL, simulatedPodLogFile, startSimulatedPodLogs } from "./simulated-pods";

const conn = testSuperCluster();
const stateDir = inject("superStateDir");
const kubeconfig = inject("superKubeconfig");
const logger = createLogger({}, "warn");
let kubectl = "";
let namespace = "";
let cleanup: () => Promise<void> = async () => {};
let binder: ReturnType<typeof startSimulatedPodLogs>;

const pod = (name: string, labelled: boolean): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace, labels: labelled ? { [SIMULATED_POD_LABEL]: "true" } : { app: "plain" } },
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
  binder = startSimulatedPodLogs(conn, { stateDir, logger });
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

  it("serves kubectl logs of labelled pods, and runs kubectl exec in a sandbox, never on this host", {
    timeout: 90_000,
  }, async () => {
    await createObject(conn, pod("shell", true));
    await createObject(conn, pod("plain", false));
    await running("shell");
    await running("plain");
    const kubectlArgs = ["--kubeconfig", kubeconfig, "-n", namespace];

    const logs = await eventually(async () => {
      const result = await run(kubectl, [...kubectlArgs, "logs", "shell"], { timeoutMs: 20_000 });
      return result.stdout.includes("simulated pod") ? result.stdout : undefined;
    }, 30_000);
    expect(logs).toContain(`simulated pod ${namespace}/shell started on ${localNodeName(0)}`);
    expect(fs.existsSync(simulatedPodLogFile(stateDir, namespace, "shell"))).toBe(true);
    const noLogs = await run(kubectl, [...kubectlArgs, "logs", "plain"], { timeoutMs: 20_000 }).catch(
      (error: unknown) => error,
    );
    expect(noLogs).toBeInstanceOf(CommandError);

    // A file only this host has: the sandbox must not see it.
    const hostFile = path.join(stateDir, "host-only");
    fs.writeFileSync(hostFile, "host secret");
    const exec = await eventually(async () => {
      const result = await run(
        kubectl,
        [
          ...kubectlArgs,
          "exec",
          "shell",
          "--",
          "sh",
          "-c",
          `pwd; id -u; hostname; cat ${hostFile} 2>&1; ls /; env | sort`,
        ],
        { timeoutMs: 20_000 },
      );
      return result.stdout;
    }, 30_000);
    const [workDir, uid, hostname, secret, ...rest] = exec.trim().split("\n");
    expect(workDir).toBe("/home");
    expect(uid).toBe("65534");
    expect(hostname).toBe("shell");
    expect(secret).toMatch(/No such file/);
    expect(rest).toContain("bin");
    expect(rest).not.toContain("work");
    expect(rest).toContain("HOSTNAME=shell");
    // Nothing of this host's or the test runner's environment reaches the sandbox.
    const leaked = rest.filter((line) =>
      /^(DATABASE_URL|NODE_OPTIONS|npm_|VITEST|KWOK_|AWS_|GITHUB_)/.test(line),
    );
    expect(leaked).toEqual([]);
    expect(exec).not.toContain("host secret");
  });
});
