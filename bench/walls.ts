/**
 * What the walls of hard multi-tenancy cost (issue 14), each against a baseline measured in the
 * same run, samples interleaved:
 *   1. etcd over TLS with client certificates: writes (POST a ConfigMap) and reads (GET the list of
 *      200) through a tenant control plane of Ring0's local provisioner (hardened) against the same
 *      three components from bare `kwokctl create cluster` (etcd in plain HTTP), each with its admin
 *      certificate;
 *   2. the exec sandbox: `kubectl exec <pod> -- true` on a simulated node (a fresh sandbox per
 *      exec: namespaces, a root, cgroups, a seccomp filter) against `kubectl get pod <pod>` through
 *      the same API server with the same kubectl (the request without the sandbox);
 *   3. the egress wall of tenant control planes: a new connection and one HTTP request through a
 *      tenant's egress proxy (CONNECT on its Unix socket, the policy asked) against the same on a
 *      direct TCP connection; and the super-cluster lookup the policy makes for a pod IP.
 * Usage: tsx bench/walls.ts [requests=200] [execs=20]. Figures go to bench/results/walls.json.
 */
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setWebhookEndpoint } from "@/server/admission/registration";
import { kubeBinaries, runKwokctl } from "@/server/cluster/kwokctl";
import { renderKwokctlConfig } from "@/server/cluster/kwokctl-config";
import { localSuperCluster } from "@/server/cluster/local";
import { localNodeName } from "@/server/cluster/nodes";
import { freePortsFor } from "@/server/cluster/ports";
import { createObject } from "@/server/k8s/apply";
import { connectCluster } from "@/server/k8s/cluster";
import { controlPlaneCreateArgs, createLocalProvisioner } from "@/server/provisioners/local";
import { startEgressProxy } from "@/server/provisioners/local/egress";
import { createEgressPolicy, isTenantPodIp } from "@/server/provisioners/local/egress-policy";
import { availableVersions } from "@/server/provisioners/versions";
import { type HttpsIdentity, httpsAgent, httpsRequest, kubectl } from "./lib/clients";
import { ratio, round, say, sized, summary, writeResults } from "./lib/figures";
import {
  benchDir,
  cleanUpOnSignal,
  cleanupStack,
  exitWhenDone,
  finishBench,
  logger,
  waitFor,
} from "./lib/run";

const REQUESTS = Number(process.argv[2] ?? sized(200, 100));
const EXECS = Number(process.argv[3] ?? sized(20, 10));
const PORT_OPTIONS = ["kubeApiserverPort", "etcdPort", "etcdPeerPort", "kubeControllerManagerPort"] as const;

const readPem = (file: string) => fs.readFileSync(file, "utf8");

/** Time one async call in ms. */
async function timed(task: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await task();
  return performance.now() - started;
}

interface ControlPlane {
  name: string;
  server: string;
  identity: HttpsIdentity;
}

async function main() {
  const root = await benchDir("ring0-bench-walls-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  const results: Record<string, unknown> = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memoryGiB: round(os.totalmem() / 2 ** 30), load: os.loadavg() },
  };
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    const kubectlBinary = path.join(binDir, "kubectl");

    // 1. etcd over TLS: a hardened tenant control plane against a bare kwokctl one.
    const provisioner = createLocalProvisioner({
      stateDir: path.join(root, "ring0"),
      logger,
      binDir,
      vnAgentStateDir: false,
    });
    cleanup.push("tenant control plane", () => provisioner.destroy("walls"));
    await provisioner.ensure({
      tenant: "walls",
      version: availableVersions()[0] as string,
      suspended: false,
    });
    const access = await provisioner.access("walls");
    if (!access) throw new Error("the hardened control plane has no admin access");
    const hardened: ControlPlane = {
      name: "hardened",
      server: access.server,
      identity: { ca: access.ca, cert: access.cert, key: access.key },
    };

    const bareDir = path.join(root, "bare");
    fs.mkdirSync(bareDir, { recursive: true });
    const ports = await freePortsFor(PORT_OPTIONS);
    const bareCluster = { workDir: bareDir, name: "bare-walls", configPath: path.join(bareDir, "kwok.yaml") };
    fs.writeFileSync(
      bareCluster.configPath,
      renderKwokctlConfig({ workDir: bareDir, binDir, writer: "bench/walls.ts", ports }),
    );
    cleanup.push("bare cluster", () =>
      runKwokctl(bareCluster, binDir, ["delete", "cluster"], { timeoutMs: 120_000, logger }),
    );
    await runKwokctl(bareCluster, binDir, controlPlaneCreateArgs(), { timeoutMs: 180_000, logger });
    const barePki = path.join(bareDir, "clusters", bareCluster.name, "pki");
    const bare: ControlPlane = {
      name: "bare",
      server: `https://127.0.0.1:${ports.kubeApiserverPort}`,
      identity: {
        ca: readPem(path.join(barePki, "ca.crt")),
        cert: readPem(path.join(barePki, "admin.crt")),
        key: readPem(path.join(barePki, "admin.key")),
      },
    };
    for (const plane of [hardened, bare]) {
      await waitFor(
        `${plane.name} serving`,
        async () =>
          (
            await httpsRequest(
              `${plane.server}/api/v1/namespaces/default/serviceaccounts/default`,
              plane.identity,
            ).catch(() => ({ status: 0 }))
          ).status === 200,
        { timeoutMs: 120_000 },
      );
    }
    say(`control planes up; ${REQUESTS} writes and reads each, interleaved`);
    const agents = { hardened: httpsAgent(hardened.identity, true), bare: httpsAgent(bare.identity, true) };
    const samples = {
      write: { hardened: [] as number[], bare: [] as number[] },
      read: { hardened: [] as number[], bare: [] as number[] },
    };
    for (let index = 0; index < REQUESTS; index++) {
      const order = index % 2 === 0 ? [hardened, bare] : [bare, hardened];
      for (const plane of order) {
        const key = plane.name as "hardened" | "bare";
        samples.write[key].push(
          await timed(async () => {
            const answer = await httpsRequest(
              `${plane.server}/api/v1/namespaces/default/configmaps`,
              plane.identity,
              {
                agent: agents[key],
                method: "POST",
                body: {
                  apiVersion: "v1",
                  kind: "ConfigMap",
                  metadata: { name: `cm-${index}` },
                  data: { index: String(index) },
                },
              },
            );
            if (answer.status !== 201) throw new Error(`${plane.name}: create answered ${answer.status}`);
          }),
        );
      }
    }
    for (let index = 0; index < REQUESTS; index++) {
      const order = index % 2 === 0 ? [hardened, bare] : [bare, hardened];
      for (const plane of order) {
        const key = plane.name as "hardened" | "bare";
        samples.read[key].push(
          await timed(async () => {
            // A consistent list (no resourceVersion): etcd is asked at least for its current revision.
            const answer = await httpsRequest(
              `${plane.server}/api/v1/namespaces/default/configmaps`,
              plane.identity,
              { agent: agents[key] },
            );
            if (answer.status !== 200) throw new Error(`${plane.name}: list answered ${answer.status}`);
          }),
        );
      }
    }
    const etcd = {
      write: { hardened: summary(samples.write.hardened, 2), bare: summary(samples.write.bare, 2) },
      read: { hardened: summary(samples.read.hardened, 2), bare: summary(samples.read.bare, 2) },
    };
    results.etcdTls = {
      ...etcd,
      ratioWriteP50: ratio(etcd.write.hardened.p50, etcd.write.bare.p50),
      ratioReadP50: ratio(etcd.read.hardened.p50, etcd.read.bare.p50),
    };
    say(
      `etcd over TLS: write p50 ${etcd.write.hardened.p50} ms vs ${etcd.write.bare.p50} ms bare (${ratio(etcd.write.hardened.p50, etcd.write.bare.p50)}×); ` +
        `list of ${REQUESTS} p50 ${etcd.read.hardened.p50} ms vs ${etcd.read.bare.p50} ms (${ratio(etcd.read.hardened.p50, etcd.read.bare.p50)}×)`,
    );
    agents.hardened.destroy();
    agents.bare.destroy();

    // 2. The exec sandbox on a simulated node of a local super cluster.
    const superCluster = localSuperCluster({ stateDir: path.join(root, "super"), logger, binDir });
    cleanup.push("super cluster down", () => superCluster.down());
    const up = await superCluster.up({ nodes: 1 });
    const conn = connectCluster("bench-walls-super", { file: up.kubeconfig });
    await createObject(conn, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "target", namespace: "default" },
      spec: { nodeName: localNodeName(0), containers: [{ name: "app", image: "busybox" }] },
    });
    const cache = path.join(root, "kubectl", "cache");
    await waitFor(
      "the pod running on the simulated node",
      async () =>
        (await kubectl(kubectlBinary, up.kubeconfig, cache, ["exec", "target", "--", "true"])).code === 0,
      { timeoutMs: 60_000 },
    );
    const exec = { sandbox: [] as number[], request: [] as number[] };
    for (let index = 0; index < EXECS; index++) {
      const steps = [
        async () =>
          exec.sandbox.push(
            await timed(async () => {
              const result = await kubectl(kubectlBinary, up.kubeconfig, cache, [
                "exec",
                "target",
                "--",
                "true",
              ]);
              if (result.code !== 0) throw new Error(`kubectl exec failed: ${result.stderr}`);
            }),
          ),
        async () =>
          exec.request.push(
            await timed(async () => {
              const result = await kubectl(kubectlBinary, up.kubeconfig, cache, ["get", "pod", "target"]);
              if (result.code !== 0) throw new Error(`kubectl get failed: ${result.stderr}`);
            }),
          ),
      ];
      if (index % 2 === 1) steps.reverse();
      for (const step of steps) await step();
    }
    const sandbox = summary(exec.sandbox);
    const request = summary(exec.request);
    results.execSandbox = {
      kubectlExecTrue: sandbox,
      kubectlGetPod: request,
      ratioP50: ratio(sandbox.p50, request.p50),
    };
    say(
      `exec in a fresh sandbox: kubectl exec -- true p50 ${sandbox.p50} ms vs kubectl get pod ${request.p50} ms (${ratio(sandbox.p50, request.p50)}×)`,
    );

    // 3. The egress wall: a new connection and one request through a tenant's egress proxy (CONNECT
    //    over its Unix socket, the policy asked) against the same request on a direct connection;
    //    and the policy's question to the super cluster for a pod IP (what each new connection to a
    //    tenant pod costs).
    const server = http.createServer((_request, response) => response.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanup.push("egress target", () => new Promise<void>((resolve) => server.close(() => resolve())));
    const target = { host: "127.0.0.1", port: (server.address() as net.AddressInfo).port };
    const sockets = {
      controlplane: path.join(root, "egress", "bench.sock"),
      cluster: path.join(root, "egress", "bench.cluster.sock"),
    };
    setWebhookEndpoint({ baseUrl: `https://${target.host}:${target.port}`, caBundle: "" });
    const proxy = await startEgressProxy({
      tenant: "bench",
      sockets,
      logger,
      // The policy lets the target through as Ring0's own webhook server.
      policy: createEgressPolicy({ superCluster: () => null }),
    });
    cleanup.push("egress proxy", () => proxy.close());
    const oneRequest = (socket: net.Socket, head = "") =>
      new Promise<void>((resolve, reject) => {
        let text = "";
        socket.on("data", (chunk: Buffer) => {
          text += chunk.toString("latin1");
          if (text.endsWith("ok")) {
            socket.destroy();
            resolve();
          }
        });
        socket.on("error", reject);
        socket.write(`${head}GET / HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n`);
      });
    const egress = { wall: [] as number[], direct: [] as number[], podCheck: [] as number[] };
    for (let index = 0; index < REQUESTS; index++) {
      const steps = [
        async () =>
          egress.direct.push(
            await timed(async () => {
              const socket = net.connect(target.port, target.host);
              await new Promise((resolve) => socket.once("connect", resolve));
              await oneRequest(socket);
            }),
          ),
        async () =>
          egress.wall.push(
            await timed(async () => {
              const socket = net.connect(sockets.controlplane);
              await new Promise((resolve) => socket.once("connect", resolve));
              await oneRequest(
                socket,
                `CONNECT ${target.host}:${target.port} HTTP/1.1\r\nHost: bench\r\n\r\n`,
              );
            }),
          ),
      ];
      if (index % 2 === 1) steps.reverse();
      for (const step of steps) await step();
    }
    for (let index = 0; index < Math.min(REQUESTS, 50); index++) {
      egress.podCheck.push(await timed(() => isTenantPodIp(conn, "bench", "10.244.255.254")));
    }
    const wall = summary(egress.wall, 2);
    const direct = summary(egress.direct, 2);
    results.egressWall = {
      connectionThroughWall: wall,
      directConnection: direct,
      ratioP50: ratio(wall.p50, direct.p50),
      podCheckOnSuperCluster: summary(egress.podCheck, 2),
    };
    say(
      `egress wall: new connection + request p50 ${wall.p50} ms through the wall vs ${direct.p50} ms direct (${ratio(wall.p50, direct.p50)}×); ` +
        `the pod check per new connection to a pod p50 ${summary(egress.podCheck, 2).p50} ms`,
    );
    writeResults("walls", results);
  } catch (error) {
    failed = error;
  }
  const outcome = await finishBench(cleanup, root, failed);
  if (outcome) throw outcome;
}

exitWhenDone(main());
