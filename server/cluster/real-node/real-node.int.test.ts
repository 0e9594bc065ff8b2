/**
 * A real node, for real: its own local super cluster (one simulated node, one real node: this
 * host's kubelet and containerd), pods in real containers, Services through kube-proxy, the host's
 * wall attacked from inside a pod, the kubelet's API attacked without and with wrong credentials,
 * and a teardown that leaves nothing on the host.
 */

import { spawn } from "node:child_process";
import dgram from "node:dgram";
import fs from "node:fs";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { type ClusterConnection, connectCluster } from "@/server/k8s/cluster";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { nodeUsage } from "@/server/nodes/usage";
import { deleteNodeShell, nodeShellNamespace, openNodeShell } from "@/server/streams/node-shell";
import { superNamespace } from "@/server/syncer/naming";
import { IDENTITY_SECRET_PREFIX } from "@/server/syncer/pod-identity";
import { applyTenantDefaults } from "@/server/tenants/defaults";
import { tenantPodUsage } from "@/server/workloads/usage";
import { type DataPlaneWorld, startDataPlaneWorld } from "@/test/integration/data-plane-world";
import {
  apiService,
  configMapWebhook,
  hookObjects,
  hookTls,
  serviceAt,
  webhookConfigMap,
} from "@/test/integration/extensions";
import { removeOwnWorld } from "@/test/integration/own-world";
import { startWorldGateway, type WorldGateway } from "@/test/integration/world-gateway";
import { type LocalSuperCluster, localSuperCluster } from "../local";
import { CommandError, processesMentioning, type RunResult, run } from "../process";
import { bridgeMacOf, mountsUnder, realNodePrerequisites } from "./host";
import { SINK_DEVICE } from "./host-firewall";
import {
  HTTPD_IMAGE,
  KUBECTL_IMAGE,
  POD_API_ADDRESS,
  realNodePlan,
  realNodesDir,
  registryPlan,
  SIMULATED_TAINT_KEY,
  TOOLBOX_IMAGE,
} from "./plan";
import { pushImageArchive, runningRegistryPort } from "./registry";
import { startTenantWall, type TenantWall } from "./tenant-wall";

const problems = realNodePrerequisites();
const logger = createLogger({}, "warn");
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-real-node-"));
const plan = realNodePlan(stateDir, 0);
let cluster: LocalSuperCluster;
let conn: ClusterConnection;
let kubectlPath = "";
let wall: TenantWall | undefined;
let kubeconfig = "";

const kubectl = async (...args: string[]) =>
  (await run(kubectlPath, ["--kubeconfig", kubeconfig, ...args], { timeoutMs: 60_000 })).stdout;

/**
 * Runs `script` in the toolbox pod; resolves with its output whatever the script's exit code, and
 * fails the test when the script did not run there at all (so a probe can never pass by not running).
 */
async function inPod(script: string): Promise<{ out: string }> {
  let out: string;
  try {
    out = await kubectl("exec", "t", "--", "sh", "-c", `echo PROBE-RAN; ${script}`);
  } catch (error) {
    const result = (error as { result?: { stdout: string; stderr: string } }).result;
    out = `${result?.stdout ?? ""}${result?.stderr ?? ""}`;
  }
  expect(out, "the probe ran in pod t").toContain("PROBE-RAN");
  return { out };
}

async function podRunning(name: string) {
  await eventually(async () => {
    const pod = await kubeRequest<{ status?: { phase?: string } }>(conn, {
      path: `/api/v1/namespaces/default/pods/${name}`,
    });
    return pod.status?.phase === "Running";
  }, 90_000);
}

function kubeletGet(
  urlPath: string,
  tls: { ca: string; cert?: string; key?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: plan.nodeIp,
        port: 10250,
        path: urlPath,
        method: "GET",
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        servername: plan.name,
        timeout: 10_000,
      },
      (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => {
          body += chunk.toString("utf8");
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on("error", reject);
    request.end();
  });
}

/**
 * A `docker save`-style archive (manifest.json, config, uncompressed layer tar) of the httpd image
 * under `repoTag`, as an operator would bring from a machine with Docker (in the suite's state dir,
 * which goes with it).
 */
async function dockerArchiveOfHttpd(repoTag: string): Promise<string> {
  const work = fs.mkdtempSync(path.join(stateDir, "docker-archive-"));
  const oci = path.join(work, "oci");
  const docker = path.join(work, "docker");
  fs.mkdirSync(oci);
  fs.mkdirSync(path.join(docker, "layer"), { recursive: true });
  await run("tar", ["-xf", path.join(realNodesDir(stateDir), "images", "httpd.tar"), "-C", oci], {
    timeoutMs: 60_000,
  });
  const blob = (digest: string) => path.join(oci, "blobs", "sha256", digest.replace("sha256:", ""));
  const index = JSON.parse(fs.readFileSync(path.join(oci, "index.json"), "utf8")) as {
    manifests: { digest: string }[];
  };
  const manifest = JSON.parse(fs.readFileSync(blob(index.manifests[0]?.digest as string), "utf8")) as {
    config: { digest: string };
    layers: { digest: string }[];
  };
  fs.copyFileSync(blob(manifest.config.digest), path.join(docker, "config.json"));
  fs.writeFileSync(
    path.join(docker, "layer", "layer.tar"),
    zlib.gunzipSync(fs.readFileSync(blob(manifest.layers[0]?.digest as string))),
  );
  fs.writeFileSync(
    path.join(docker, "manifest.json"),
    JSON.stringify([{ Config: "config.json", RepoTags: [repoTag], Layers: ["layer/layer.tar"] }]),
  );
  const archive = path.join(work, "image.tar");
  await run("tar", ["-cf", archive, "-C", docker, "manifest.json", "config.json", "layer/layer.tar"], {
    timeoutMs: 60_000,
  });
  return archive;
}

describe.skipIf(problems.length > 0)(
  `a real node (${problems.join("; ") || "this host can run one"})`,
  () => {
    beforeAll(async () => {
      cluster = localSuperCluster({ stateDir, logger });
      const up = await cluster.up({ nodes: 1, realNodes: 1 });
      kubeconfig = up.kubeconfig;
      conn = cluster.connect();
      kubectlPath = await cluster.kubectlPath();
      // What Ring0's leader runs beside real nodes: without it no new connection between pods passes.
      wall = await startTenantWall({ superCluster: conn, logger });
    }, 600_000);

    afterAll(async () => {
      wall?.stop();
      await removeOwnWorld(cluster, stateDir);
    }, 300_000);

    it("joins Ready beside the simulated node, which is tainted so pods land on the real one", async () => {
      const status = await cluster.status();
      expect(status).toMatchObject({ running: true, nodes: 2, realNodes: 1, simulatedNodes: 1 });
      const node = await kubeRequest<{
        status: {
          nodeInfo: { containerRuntimeVersion: string; kubeletVersion: string };
          addresses: { type: string; address: string }[];
        };
      }>(conn, { path: `/api/v1/nodes/${plan.name}` });
      expect(node.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\/2\./);
      expect(node.status.nodeInfo.kubeletVersion).toMatch(/^v1\.36\./);
      expect(node.status.addresses).toContainEqual({ type: "InternalIP", address: plan.nodeIp });
      const simulated = await kubeRequest<{ spec: { taints?: { key: string; effect: string }[] } }>(conn, {
        path: "/api/v1/nodes/ring0-node-0",
      });
      expect(simulated.spec.taints).toContainEqual(
        expect.objectContaining({ key: SIMULATED_TAINT_KEY, effect: "NoSchedule" }),
      );
    });

    it("runs a pod in a real container: its own hostname, PID 1, logs and pod IP", async () => {
      await kubectl(
        "run",
        "t",
        `--image=${TOOLBOX_IMAGE}`,
        "--restart=Never",
        "--command",
        "--",
        "sh",
        "-c",
        "echo started in $(hostname); exec sleep 3600",
      );
      await podRunning("t");
      const pod = await kubeRequest<{ spec: { nodeName: string }; status: { podIP: string } }>(conn, {
        path: "/api/v1/namespaces/default/pods/t",
      });
      expect(pod.spec.nodeName).toBe(plan.name);
      expect(pod.status.podIP).toMatch(/^10\.244\.0\.\d+$/);
      expect((await kubectl("exec", "t", "--", "hostname")).trim()).toBe("t");
      expect(
        (await kubectl("exec", "t", "--", "cat", "/proc/1/cmdline")).split("\0").filter(Boolean),
      ).toEqual(["sleep", "3600"]);
      expect(await kubectl("logs", "t")).toContain("started in t");
    });

    it("serves a Service's cluster IP through kube-proxy, from a pod", async () => {
      await kubectl("run", "web", `--image=${HTTPD_IMAGE}`, "--restart=Never", "--port=8080");
      await kubectl("expose", "pod", "web", "--port=80", "--target-port=8080");
      await podRunning("web");
      const service = await kubeRequest<{ spec: { clusterIP: string } }>(conn, {
        path: "/api/v1/namespaces/default/services/web",
      });
      await eventually(async () => {
        const { out } = await inPod(
          `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${service.spec.clusterIP} 80`,
        );
        return out.includes("200 OK") && out.includes("web");
      }, 30_000);
    });

    it("serves that cluster IP to the host too; what nothing serves in the pod or Service network ends on the sink, never the default route", async () => {
      const service = await kubeRequest<{ spec: { clusterIP: string } }>(conn, {
        path: "/api/v1/namespaces/default/services/web",
      });
      const fromHost = await eventually(async () => {
        const response = await fetch(`http://${service.spec.clusterIP}/`, {
          signal: AbortSignal.timeout(3_000),
        }).catch(() => undefined);
        return response?.ok ? await response.text() : undefined;
      }, 30_000);
      expect(fromHost).toContain("web");
      const routeTo = async (address: string) =>
        (await run("ip", ["-o", "route", "get", address], { timeoutMs: 10_000 })).stdout;
      const pod = await kubeRequest<{ status: { podIP: string } }>(conn, {
        path: "/api/v1/namespaces/default/pods/web",
      });
      expect(await routeTo(pod.status.podIP)).toContain(`dev ${plan.bridge} `);
      // A cluster IP no Service holds, and a node subnet with no bridge: the sink, not eth0.
      const taken = new Set(
        (
          await kubeRequest<{ items: { spec: { clusterIP?: string } }[] }>(conn, { path: "/api/v1/services" })
        ).items.map((item) => item.spec.clusterIP),
      );
      const free = Array.from({ length: 200 }, (_, i) => `10.0.0.${250 - i}`).find((ip) => !taken.has(ip));
      expect(free).toBeDefined();
      for (const address of [free as string, "10.244.77.5"]) {
        expect(await routeTo(address), address).toMatch(new RegExp(`dev ${SINK_DEVICE} `));
      }
      // And a connection there goes out on the sink (dropped here), after the routes said so.
      const sent = () =>
        Number(fs.readFileSync(`/sys/class/net/${SINK_DEVICE}/statistics/tx_packets`, "utf8"));
      const before = sent();
      const refused = await new Promise<string>((resolve) => {
        const socket = net.connect({ host: free as string, port: 80, timeout: 1_500 });
        socket.on("connect", () => resolve("connected"));
        socket.on("timeout", () => resolve("timeout"));
        socket.on("error", (error) => resolve(error.message));
      });
      expect(refused).not.toBe("connected");
      expect(sent()).toBeGreaterThan(before);
    });

    it("pulls images from Ring0's registry: a pushed `docker save` archive runs by its plain name", async () => {
      const archive = await dockerArchiveOfHttpd("nginx:latest");
      const binDir = path.dirname(kubectlPath);
      const pushed = await pushImageArchive(stateDir, binDir, archive);
      expect(pushed.map((image) => image.name)).toEqual(["docker.io/library/nginx:latest"]);
      // Pushing again uploads nothing: the registry has every blob.
      const again = await pushImageArchive(stateDir, binDir, archive);
      expect(again[0]).toMatchObject({ uploaded: 0, present: 2 });
      // Another image under a name the registry has is refused unless the operator says --replace,
      // and Ring0's own names (the node shell's toolbox among them) are never anyone else's.
      const toolbox = path.join(realNodesDir(stateDir), "images", "toolbox.tar");
      await expect(pushImageArchive(stateDir, binDir, toolbox, { name: "nginx:latest" })).rejects.toThrow(
        /already in the registry as another image.*--replace/,
      );
      await expect(pushImageArchive(stateDir, binDir, archive, { name: TOOLBOX_IMAGE })).rejects.toThrow(
        /Ring0's own images/,
      );
      await expect(
        pushImageArchive(stateDir, binDir, archive, { name: TOOLBOX_IMAGE, replace: true }),
      ).rejects.toThrow(/Ring0's own images/);
      await kubectl("run", "nginx", "--image=nginx", "--restart=Never", "--port=8080");
      await podRunning("nginx");
      const pod = await kubeRequest<{ status: { podIP: string; containerStatuses: { imageID: string }[] } }>(
        conn,
        { path: "/api/v1/namespaces/default/pods/nginx" },
      );
      expect(pod.status.containerStatuses[0]?.imageID).toMatch(/^docker\.io\/library\/nginx@sha256:/);
      const { out } = await inPod(`printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${pod.status.podIP} 8080`);
      expect(out).toContain("200 OK");
    });

    it("fails a pull of an image nobody pushed at Ring0's registry, never reaching out to the internet", async () => {
      await kubectl("run", "ghost", "--image=ghost-image:1", "--restart=Never");
      const message = await eventually(async () => {
        const events = await kubeRequest<{ items: { reason: string; message: string }[] }>(conn, {
          path: "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dghost",
        });
        return events.items.find((event) => event.reason === "Failed" && event.message.includes("pull"))
          ?.message;
      }, 60_000);
      // A 404 from the local registry; a try at docker.io would fail on DNS or the dial instead.
      expect(message).toMatch(/docker\.io\/library\/ghost-image:1: not found/);
      expect(message).not.toMatch(/registry-1\.docker\.io|lookup|dial tcp|i\/o timeout/);
      // And the registry itself is out of a pod's reach (it listens on the host's loopback only).
      const port = runningRegistryPort(stateDir, path.dirname(kubectlPath));
      expect(port).toBeGreaterThan(0);
      // On the host, nothing without Ring0's root-only credentials reads or writes it.
      const catalog = `http://127.0.0.1:${port}/v2/_catalog`;
      expect((await fetch(catalog)).status).toBe(401);
      const wrong = `Basic ${Buffer.from("ring0:not-the-password").toString("base64")}`;
      expect((await fetch(catalog, { headers: { authorization: wrong } })).status).toBe(401);
      const upload = await fetch(`http://127.0.0.1:${port}/v2/docker.io/library/nginx/blobs/uploads/`, {
        method: "POST",
      });
      expect(upload.status).toBe(401);
      for (const file of [registryPlan(stateDir).credentials, registryPlan(stateDir).htpasswd])
        expect(fs.statSync(file).mode & 0o077).toBe(0);
      const hostsToml = path.join(registryPlan(stateDir).hostsDir, "docker.io", "hosts.toml");
      expect(fs.statSync(hostsToml).mode & 0o077).toBe(0);
      const probe = await inPod(`nc -w 2 ${plan.nodeIp} ${port} </dev/null && echo REACHED`);
      expect(probe.out).not.toContain("REACHED");
    });

    it("walls a pod off from the host and from everything beyond this host's pods", async () => {
      // A server on the node IP, which the host itself reaches…
      const server = net.createServer((socket) => socket.end("host service\n"));
      await new Promise<void>((resolve) => server.listen(0, plan.nodeIp, resolve));
      const port = (server.address() as net.AddressInfo).port;
      try {
        const fromHost = await new Promise<string>((resolve, reject) => {
          const socket = net.connect(port, plan.nodeIp);
          let text = "";
          socket.on("data", (chunk) => {
            text += chunk.toString();
          });
          socket.on("end", () => resolve(text));
          socket.on("error", reject);
        });
        expect(fromHost).toBe("host service\n");
        // …but a pod does not: neither it, nor the kubelet, nor the super cluster's API server.
        const probe = await inPod(`nc -w 2 ${plan.nodeIp} ${port} </dev/null && echo REACHED`);
        expect(probe.out).not.toContain("host service");
        const kubelet = await inPod(`nc -w 2 ${plan.nodeIp} 10250 </dev/null && echo REACHED`);
        expect(kubelet.out).not.toContain("REACHED");
        const apiserver = await inPod("nc -w 2 10.0.0.1 443 </dev/null && echo REACHED");
        expect(apiserver.out).not.toContain("REACHED");
      } finally {
        server.close();
      }
      // Nor over IPv6: pods have link-local addresses, and a host listener on [::] (dual-stack, as
      // Node's default) answers on the bridge's link-local address too; the wall drops it.
      const wildcard = net.createServer((socket) => socket.end("v6 host service\n"));
      await new Promise<void>((resolve) => wildcard.listen(0, "::", resolve));
      try {
        const linkLocal = os
          .networkInterfaces()
          [plan.bridge]?.find((address) => address.family === "IPv6" && address.address.startsWith("fe80:"));
        expect(linkLocal, `${plan.bridge} has an IPv6 link-local address`).toBeDefined();
        const v6 = await inPod(
          `nc -w 2 ${linkLocal?.address}%eth0 ${(wildcard.address() as net.AddressInfo).port} </dev/null; echo exit=$?`,
        );
        expect(v6.out).not.toContain("v6 host service");
      } finally {
        wildcard.close();
      }
      // No route out of the pod network: only the pod network and the Service range (nothing
      // outside this host's own ranges is dialled to show it).
      const routes = await inPod("ip route");
      expect(routes.out).not.toMatch(/^default/m);
      const destinations = routes.out
        .split("\n")
        .filter((line) => /^\d/.test(line))
        .map((line) => line.split(" ")[0]);
      expect(new Set(destinations)).toEqual(new Set(["10.244.0.0/16", "10.244.0.0/24", "10.0.0.0/24"]));
    });

    it("opens an operator's node shell in a debug pod on the real node, and removes it after", async () => {
      const name = await openNodeShell(conn, {
        node: plan.name,
        openedBy: "ring0:operator",
        maxSeconds: 120,
        image: TOOLBOX_IMAGE,
        signal: new AbortController().signal,
      });
      try {
        // The host's processes (hostPID) and its root filesystem at /host: this host, as the node is.
        const hostname = fs.readFileSync("/proc/sys/kernel/hostname", "utf8").trim();
        const seen = await kubectl(
          "exec",
          "-n",
          nodeShellNamespace,
          name,
          "--",
          "cat",
          "/host/proc/sys/kernel/hostname",
        );
        expect(seen.trim()).toBe(hostname);
        const pids = await kubectl(
          "exec",
          "-n",
          nodeShellNamespace,
          name,
          "--",
          "sh",
          "-c",
          "ls /proc | grep -c '^[0-9]'",
        );
        expect(Number(pids.trim())).toBeGreaterThan(20);
      } finally {
        expect(await deleteNodeShell(conn, name)).toBe(true);
      }
    });

    it("serves its kubelet API only to certificates of Ring0's kubelet client CA that RBAC allows", async () => {
      const client = await cluster.kubeletClient();
      const anonymous = await kubeletGet("/pods", { ca: client.ca });
      expect(anonymous.status).toBe(401);
      const agent = await kubeletGet("/pods", client);
      expect(agent.status).toBe(200);
      expect(agent.body).toContain('"name":"t"');
      // The node's own client certificate is from the cluster CA, not the kubelet client CA: refused.
      const nodeClient = {
        ca: client.ca,
        cert: fs.readFileSync(path.join(plan.paths.kubeletPki, "client.crt"), "utf8"),
        key: fs.readFileSync(path.join(plan.paths.kubeletPki, "client.key"), "utf8"),
      };
      expect((await kubeletGet("/pods", nodeClient)).status).toBe(401);
    });

    it("gives the kubelet credentials the Node authorizer confines", async () => {
      const nodeKubeconfig = plan.paths.kubeletKubeconfig;
      const secrets = await run(kubectlPath, ["--kubeconfig", nodeKubeconfig, "get", "secrets", "-A"], {
        timeoutMs: 30_000,
      }).catch((error: { result?: { stderr: string } }) => error.result?.stderr ?? "");
      expect(typeof secrets === "string" ? secrets : secrets.stdout).toMatch(/forbidden/i);
    });

    describe("tenant pods, through the kube gateway", { timeout: 180_000 }, () => {
      const suffix = Math.random().toString(36).slice(2, 7);
      const acme = `acme-${suffix}`;
      const globex = `globex-${suffix}`;
      let world: DataPlaneWorld | undefined;
      let worldGateway: WorldGateway | undefined;
      let home = "";
      const kubeconfigs: Record<string, string> = {};

      /** The real kubectl as a tenant admin, through the gateway; a non-zero exit is returned, not thrown. */
      const tenantKubectl = async (tenant: string, args: string[]): Promise<RunResult> => {
        try {
          return await run(kubectlPath, ["--kubeconfig", kubeconfigs[tenant] as string, ...args], {
            timeoutMs: 60_000,
            env: { PATH: process.env.PATH ?? "", HOME: home },
          });
        } catch (error) {
          if (error instanceof CommandError) return error.result;
          throw error;
        }
      };

      /** `kubectl apply` of `objects` as `tenant`'s admin, through the gateway. */
      const applyAs = async (tenant: string, objects: object[]) => {
        const file = path.join(home, `apply-${tenant}-${Math.random().toString(36).slice(2)}.json`);
        fs.writeFileSync(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));
        const applied = await tenantKubectl(tenant, ["apply", "-f", file]);
        expect(applied.code, applied.stderr).toBe(0);
      };

      beforeAll(async () => {
        world = await startDataPlaneWorld({
          tenants: [acme, globex],
          logger,
          name: "real-node-data-plane",
          superCluster: { connection: conn, stateDir },
          realNodes: true,
          tenantWall: false,
        });
        home = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-real-node-home-"));
        worldGateway = await startWorldGateway(world, [acme, globex], { home, logger });
        Object.assign(kubeconfigs, worldGateway.kubeconfigs);
      }, 300_000);

      afterAll(async () => {
        await worldGateway?.close();
        await world?.stop();
        if (home) fs.rmSync(home, { recursive: true, force: true });
      }, 180_000);

      const runningInTenant = (name: string) =>
        eventually(async () => {
          const got = await tenantKubectl(acme, ["get", "pod", name, "-o", "json"]);
          if (got.code !== 0) return undefined;
          const pod = JSON.parse(got.stdout) as { status?: { phase?: string }; spec?: { nodeName?: string } };
          return pod.status?.phase === "Running" ? pod : undefined;
        }, 120_000);

      it("kubectl run puts the tenant's pod in a real container: its hostname, PID 1 and logs", async () => {
        const created = await tenantKubectl(acme, [
          "run",
          "t",
          `--image=${TOOLBOX_IMAGE}`,
          "--restart=Never",
          "--command",
          "--",
          "sh",
          "-c",
          "echo hello from $(hostname); exec sleep 3600",
        ]);
        expect(created.stderr).toBe("");
        const pod = await runningInTenant("t");
        // Its vNode is the real node (the simulated one is tainted).
        expect(pod.spec?.nodeName).toBe(plan.name);
        const hostname = await tenantKubectl(acme, ["exec", "t", "--", "hostname"]);
        expect(hostname).toMatchObject({ code: 0, stdout: "t\n" });
        const cmdline = await tenantKubectl(acme, ["exec", "t", "--", "cat", "/proc/1/cmdline"]);
        expect(cmdline.stdout.split("\0").filter(Boolean)).toEqual(["sleep", "3600"]);
        const logs = await eventually(async () => {
          const result = await tenantKubectl(acme, ["logs", "t"]);
          return result.stdout.includes("hello from t") ? result : undefined;
        }, 30_000);
        expect(logs.code).toBe(0);
      });

      it("kubectl logs -f follows what the container prints next", async () => {
        const follow = spawn(kubectlPath, ["--kubeconfig", kubeconfigs[acme] as string, "logs", "-f", "t"], {
          env: { ...process.env, HOME: home },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        follow.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString();
        });
        try {
          await eventually(async () => (output.includes("hello from t") ? true : undefined), 30_000);
          // A line written to the container's own stdout (PID 1's) after the stream opened.
          const wrote = await tenantKubectl(acme, [
            "exec",
            "t",
            "--",
            "sh",
            "-c",
            `echo followed-${suffix} > /proc/1/fd/1`,
          ]);
          expect(wrote.code, wrote.stderr).toBe(0);
          await eventually(async () => (output.includes(`followed-${suffix}`) ? true : undefined), 30_000);
        } finally {
          follow.kill("SIGTERM");
        }
      });

      it("kubectl cp copies into the container and back", async () => {
        const local = path.join(home, "note.txt");
        fs.writeFileSync(local, `copied through Ring0 ${suffix}\n`);
        const up = await tenantKubectl(acme, ["cp", local, "t:/tmp/note.txt"]);
        expect(up.code, up.stderr).toBe(0);
        const read = await tenantKubectl(acme, ["exec", "t", "--", "cat", "/tmp/note.txt"]);
        expect(read.stdout).toBe(`copied through Ring0 ${suffix}\n`);
        const back = path.join(home, "back.txt");
        const down = await tenantKubectl(acme, ["cp", "t:/tmp/note.txt", back]);
        expect(down.code, down.stderr).toBe(0);
        expect(fs.readFileSync(back, "utf8")).toBe(`copied through Ring0 ${suffix}\n`);
      });

      it("kubectl port-forward reaches a server in a pod", async () => {
        const created = await tenantKubectl(acme, [
          "run",
          "web",
          `--image=${HTTPD_IMAGE}`,
          "--restart=Never",
          "--port=8080",
        ]);
        expect(created.code, created.stderr).toBe(0);
        await runningInTenant("web");
        const forward = spawn(
          kubectlPath,
          ["--kubeconfig", kubeconfigs[acme] as string, "port-forward", "pod/web", "0:8080"],
          {
            env: { ...process.env, HOME: home },
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        try {
          const port = await new Promise<number>((resolve, reject) => {
            let text = "";
            forward.stdout.on("data", (chunk: Buffer) => {
              text += chunk.toString();
              const found = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(text);
              if (found) resolve(Number(found[1]));
            });
            forward.on("exit", (code: number | null) => reject(new Error(`port-forward exited (${code})`)));
          });
          const answer = await eventually(async () => {
            const response = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);
            return response?.ok ? response.text() : undefined;
          }, 30_000);
          expect(answer).toContain("web");
        } finally {
          forward.kill("SIGTERM");
        }
      });

      it("kubectl attach reaches a container's stdin and stdout", async () => {
        await applyAs(acme, [
          {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: "echo" },
            spec: {
              containers: [
                {
                  name: "echo",
                  image: TOOLBOX_IMAGE,
                  stdin: true,
                  command: ["sh", "-c", "while read line; do echo got:$line; done"],
                },
              ],
            },
          },
        ]);
        await runningInTenant("echo");
        const attach = spawn(
          kubectlPath,
          ["--kubeconfig", kubeconfigs[acme] as string, "attach", "-i", "echo"],
          {
            env: { ...process.env, HOME: home },
            stdio: ["pipe", "pipe", "pipe"],
          },
        );
        let output = "";
        attach.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString();
        });
        try {
          // Lines go in until one comes back (attach may take a moment to connect).
          await eventually(async () => {
            attach.stdin.write(`hello ${suffix}\n`);
            await new Promise((resolve) => setTimeout(resolve, 300));
            return output.includes(`got:hello ${suffix}`);
          }, 30_000);
        } finally {
          attach.kill("SIGTERM");
        }
      });

      it("kubectl exec -it gives a terminal in the container", async () => {
        // util-linux's script gives kubectl a pseudo-terminal, so -t really asks for one.
        const command = `${kubectlPath} --kubeconfig ${kubeconfigs[acme]} exec -it t -- sh -c 'tty; echo TERM=$TERM; hostname'`;
        const result = await run("script", ["-qec", command, "/dev/null"], {
          timeoutMs: 60_000,
          env: { PATH: process.env.PATH ?? "", HOME: home, TERM: "xterm-256color" },
        });
        expect(result.stdout).toMatch(/\/dev\/pts\/\d+/);
        // The runtime gives a terminal exec TERM=xterm (no terminal: no TERM at all).
        expect(result.stdout).toMatch(/TERM=xterm/);
        // The terminal may echo a NUL that script(1) passed on ("^@") before the hostname's line.
        expect(result.stdout.replaceAll("^@", "")).toMatch(/^t\r?$/m);
      });

      it("a missing image tells the tenant how to get it supplied", async () => {
        const created = await tenantKubectl(acme, [
          "run",
          "ghost",
          "--image=ghost-image:2",
          "--restart=Never",
        ]);
        expect(created.code, created.stderr).toBe(0);
        const message = await eventually(async () => {
          const got = await tenantKubectl(acme, [
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=ghost",
            "-o",
            "json",
          ]);
          const events = JSON.parse(got.stdout || "{}") as { items?: { reason: string; message: string }[] };
          return events.items?.find((event) => event.message.includes("./ring0 images push"))?.message;
        }, 90_000);
        expect(message).toContain('Failed to pull image "ghost-image:2"');
        expect(message).toContain("docker save ghost-image:2");
      });

      it("measures the tenant's own pods as kubectl top does, and the node for operators", async () => {
        const created = await tenantKubectl(acme, [
          "run",
          "busy",
          `--image=${TOOLBOX_IMAGE}`,
          "--restart=Never",
          "--command",
          "--",
          "sh",
          "-c",
          "while :; do :; done",
        ]);
        expect(created.code, created.stderr).toBe(0);
        await runningInTenant("busy");
        try {
          const acting = { user: (world as DataPlaneWorld).users[acme] as SessionUser, tenant: acme };
          const usage = await eventually(async () => {
            const result = await tenantPodUsage(acting, "default");
            if (result.state !== "serving") return undefined;
            const busy = result.pods["default/busy"];
            return busy && busy.cpuCores > 0.05 && busy.memoryBytes > 0 ? result : undefined;
          }, 90_000);
          // Every pod the tenant may list is there, measured once its kubelet has sampled it.
          expect(usage.state === "serving" && Object.keys(usage.pods)).toEqual(
            expect.arrayContaining(["default/t", "default/busy", "default/web"]),
          );
          const node = await nodeUsage(plan.name);
          expect(node).toMatchObject({ available: true, node: plan.name });
          expect(node?.available && node.usage.cpuCores).toBeGreaterThan(0.05);
          expect(node?.available && node.usage.memoryBytes).toBeGreaterThan(0);
          // A simulated node runs nothing: no usage, and it says why.
          expect(await nodeUsage("ring0-node-0")).toMatchObject({ available: false, reason: /simulated/ });
          // kubectl top, through the gateway, as for any cluster with metrics-server.
          const top = await eventually(async () => {
            const result = await tenantKubectl(acme, ["top", "pods", "-n", "default"]);
            return result.code === 0 && /^busy\s+\d+m\s+\d+Mi\s*$/m.test(result.stdout) ? result : undefined;
          }, 60_000);
          expect(top.stdout).toMatch(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/m);
          expect(top.stdout).toMatch(/^t\s+\d+m\s+\d+Mi\s*$/m);
          const containers = await tenantKubectl(acme, ["top", "pod", "busy", "--containers"]);
          expect(containers.stdout).toMatch(/^busy\s+busy\s+\d+m\s+\d+Mi\s*$/m);
          // Nodes are shared: their usage is not a tenant's to read.
          const nodes = await tenantKubectl(acme, ["top", "nodes"]);
          expect(nodes.code).not.toBe(0);
          // Another tenant's kubectl top shows none of acme's pods.
          const theirTop = await tenantKubectl(globex, ["top", "pods", "-A"]);
          expect(`${theirTop.stdout}${theirTop.stderr}`).not.toMatch(/busy|\bt\b/);
          // Another tenant measures only its own pods (it has none here).
          const theirs = await tenantPodUsage(
            { user: (world as DataPlaneWorld).users[globex] as SessionUser, tenant: globex },
            "default",
          );
          expect(theirs).toMatchObject({ state: "serving", pods: {} });
        } finally {
          await tenantKubectl(acme, ["delete", "pod", "busy", "--now"]);
        }
      });

      describe("the egress wall: webhooks and APIs served by tenant pods", () => {
        let hookIp = "";
        let caBundle = "";

        /** Creates a ConfigMap under webhook `name` as `tenant`: "created", or the refusal's message. */
        const configMapUnder = async (tenant: string, name: string, labels: Record<string, string> = {}) => {
          const file = path.join(home, `cm-${tenant}-${name}.json`);
          fs.writeFileSync(file, JSON.stringify(webhookConfigMap(name, labels)));
          const created = await tenantKubectl(tenant, ["create", "-f", file]);
          return created.code === 0 ? "created" : created.stderr.trim();
        };
        /** What acme's webhook pod has served so far, read through acme's own pods/proxy. */
        const served = async () => {
          const read = await tenantKubectl(acme, [
            "get",
            "--raw",
            "/api/v1/namespaces/default/pods/https:hook:8443/proxy/requests",
          ]);
          expect(read.code, read.stderr).toBe(0);
          return Number(read.stdout.trim());
        };

        beforeAll(async () => {
          const tls = await hookTls();
          caBundle = tls.caBundle;
          await applyAs(acme, hookObjects(tls));
          const pod = (await runningInTenant("hook")) as { status?: { podIP?: string } };
          hookIp = pod.status?.podIP ?? "";
          expect(hookIp).toMatch(/^10\.244\./);
          // The tenant's endpoints controller lists the pod as ready behind its Service.
          await eventually(async () => {
            const slices = await tenantKubectl(acme, [
              "get",
              "endpointslices",
              "-l",
              "kubernetes.io/service-name=hook",
              "-o",
              "json",
            ]);
            return slices.stdout.includes(hookIp) ? true : undefined;
          }, 60_000);
        }, 180_000);

        it("a CRD conversion webhook served by the tenant's pod converts its objects", async () => {
          const group = `hooks-${suffix}.example.com`;
          await applyAs(acme, [
            {
              apiVersion: "apiextensions.k8s.io/v1",
              kind: "CustomResourceDefinition",
              metadata: { name: `widgets.${group}` },
              spec: {
                group,
                names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
                scope: "Namespaced",
                versions: ["v1", "v2"].map((name) => ({
                  name,
                  served: true,
                  storage: name === "v1",
                  schema: {
                    openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                  },
                })),
                conversion: {
                  strategy: "Webhook",
                  webhook: {
                    conversionReviewVersions: ["v1"],
                    clientConfig: {
                      service: { namespace: "default", name: "hook", path: "/convert" },
                      caBundle,
                    },
                  },
                },
              },
            },
          ]);
          // Ring0's tenant reconciler grants the admins the new group; here, as it would.
          await applyTenantDefaults((world as DataPlaneWorld).admin[acme] as ClusterConnection, {
            tenant: acme,
            admins: [],
          });
          const widget = path.join(home, "widget.json");
          fs.writeFileSync(
            widget,
            JSON.stringify({ apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w" } }),
          );
          await eventually(
            async () => ((await tenantKubectl(acme, ["create", "-f", widget])).code === 0 ? true : undefined),
            30_000,
          );
          const read = await tenantKubectl(acme, [
            "get",
            "--raw",
            `/apis/${group}/v2/namespaces/default/widgets/w`,
          ]);
          expect(read.code, read.stderr).toBe(0);
          const converted = JSON.parse(read.stdout) as {
            apiVersion: string;
            spec?: { convertedBy?: string };
          };
          expect(converted).toMatchObject({ apiVersion: `${group}/v2`, spec: { convertedBy: "hook" } });
          // Nothing of acme's calls its pod from here on (the next tests count what reaches it).
          await tenantKubectl(acme, ["delete", "crd", `widgets.${group}`]);
        });

        it("an admission webhook served by the tenant's pod admits and refuses", async () => {
          await applyAs(acme, [
            configMapWebhook("hook", {
              service: { namespace: "default", name: "hook", path: "/admit" },
              caBundle,
            }),
          ]);
          const refused = await eventually(async () => {
            const answer = await configMapUnder(acme, "hook", { deny: "true" });
            return answer.includes("denied by the webhook in pod hook") ? answer : undefined;
          }, 30_000);
          expect(refused).toContain("admission webhook");
          expect(await configMapUnder(acme, "hook")).toBe("created");
          await tenantKubectl(acme, ["delete", "validatingwebhookconfiguration", "hook"]);
        });

        it("an APIService backed by the tenant's Service answers through the aggregator", async () => {
          const group = `agg-${suffix}.example.com`;
          await applyAs(acme, [
            apiService(group, { namespace: "default", name: "hook", port: 443 }, { caBundle }),
          ]);
          // Ring0's tenant reconciler grants the admins the new group; here, as it would.
          await applyTenantDefaults((world as DataPlaneWorld).admin[acme] as ClusterConnection, {
            tenant: acme,
            admins: [],
          });
          let last = "";
          const answer = await eventually(async () => {
            const read = await tenantKubectl(acme, ["get", "--raw", `/apis/${group}/v1/anything`]);
            last = read.stderr;
            return read.code === 0 ? read.stdout : undefined;
          }, 60_000).catch(async (error: Error) => {
            const status = await tenantKubectl(acme, [
              "get",
              "apiservice",
              `v1.${group}`,
              "-o",
              "jsonpath={.status}",
            ]);
            throw new Error(`${error.message}; last answer: ${last}; APIService status: ${status.stdout}`);
          });
          expect(answer).toContain("hello from hook");
          await tenantKubectl(acme, ["delete", "apiservice", `v1.${group}`]);
        });

        it("another tenant pointing its webhooks, APIService and pods/proxy at the pod gets one refusal, and the pod sees nothing", async () => {
          const before = await served();
          const nowhere = "10.244.255.254";
          /** globex's webhook through its Service `steal`, whose only endpoint is `address`:8443. */
          const throughSteal = async (address: string) => {
            await applyAs(globex, [
              ...serviceAt("default", "steal", { address, port: 8443 }),
              configMapWebhook("steal", {
                service: { namespace: "default", name: "steal", path: "/admit" },
                caBundle,
              }),
            ]);
            return eventually(async () => {
              const answer = await configMapUnder(globex, "steal");
              return answer.includes(`while dialing ${address}:8443`)
                ? answer.replaceAll(address, "<address>")
                : undefined;
            }, 30_000);
          };
          const toAcme = await throughSteal(hookIp);
          const toNowhere = await throughSteal(nowhere);
          expect(toAcme).toMatch(/proxy error .*while dialing <address>:8443, code 403/);
          expect(toAcme).toBe(toNowhere);

          // An APIService of globex's own group, its Service's endpoint acme's pod: unavailable, refused.
          const group = `steal-${suffix}.example.com`;
          await throughSteal(hookIp);
          await applyAs(globex, [
            apiService(group, { namespace: "default", name: "steal", port: 443 }, { caBundle }),
          ]);
          const unavailable = await eventually(async () => {
            const got = await tenantKubectl(globex, ["get", "apiservice", `v1.${group}`, "-o", "json"]);
            const conditions = (
              JSON.parse(got.stdout || "{}") as {
                status?: { conditions?: { type: string; message?: string }[] };
              }
            ).status?.conditions;
            const message = conditions?.find((condition) => condition.type === "Available")?.message ?? "";
            return message.includes("code 403") ? message : undefined;
          }, 60_000);
          expect(unavailable).toContain(`while dialing ${hookIp}:8443`);
          expect((await tenantKubectl(globex, ["get", "--raw", `/apis/${group}/v1/anything`])).code).not.toBe(
            0,
          );

          // pods/proxy to a pod of globex whose status globex rewrote to acme's pod IP.
          await applyAs(globex, [
            {
              apiVersion: "v1",
              kind: "Pod",
              metadata: { name: "ghost" },
              // Privileged: the syncer never runs it below, so no status from below overwrites the one
              // globex writes (a running pod's status is rewritten from below, racing the patch).
              spec: {
                containers: [
                  {
                    name: "ghost",
                    image: TOOLBOX_IMAGE,
                    command: ["sleep", "3600"],
                    securityContext: { privileged: true },
                  },
                ],
              },
            },
          ]);
          const asGlobex = connectCluster("globex-through-gateway", { file: kubeconfigs[globex] as string });
          const proxied = await eventually(async () => {
            await tenantKubectl(globex, [
              "patch",
              "pod",
              "ghost",
              "--subresource=status",
              "--type=merge",
              "-p",
              JSON.stringify({ status: { podIP: hookIp, podIPs: [{ ip: hookIp }] } }),
            ]);
            // The answer as it comes through the gateway (kubectl hides a proxy error's text).
            const read = await kubeRequestText(asGlobex, {
              path: "/api/v1/namespaces/default/pods/https:ghost:8443/proxy/requests",
            });
            return read.text.includes("code 403") ? read : undefined;
          }, 60_000);
          expect(proxied.status).toBeGreaterThanOrEqual(500);
          expect(proxied.text).toContain(`while dialing ${hookIp}:8443, code 403`);

          // Nothing of globex's reached acme's pod.
          expect(await served()).toBe(before);
          await tenantKubectl(globex, ["delete", "pod", "ghost", "--now"]);
        });

        it("as a tenant admin, URL webhooks at Ring0's services, the super cluster and another tenant get that one refusal", async () => {
          const closed = await new Promise<number>((resolve) => {
            const probe = net.createServer().listen(0, "127.0.0.1", () => {
              const { port } = probe.address() as net.AddressInfo;
              probe.close(() => resolve(port));
            });
          });
          const targets = {
            gateway: `127.0.0.1:${worldGateway?.port}`,
            postgres: `127.0.0.1:${new URL((world as DataPlaneWorld).databaseUrl).port}`,
            superApiServer: new URL(conn.server).host,
            otherTenantApiServer: new URL(
              ((world as DataPlaneWorld).admin[globex] as ClusterConnection).server,
            ).host,
            registry: `127.0.0.1:${runningRegistryPort(stateDir, path.dirname(kubectlPath))}`,
            vnAgent: `127.0.0.1:${[...(world as DataPlaneWorld).agents.endpoints().values()][0]?.port}`,
            closedPort: `127.0.0.1:${closed}`,
          };
          const messages = new Set<string>();
          for (const [name, address] of Object.entries(targets)) {
            expect(address, name).toMatch(/^127\.0\.0\.1:\d+$/);
            const hook = `url-${name.toLowerCase()}`;
            await applyAs(acme, [configMapWebhook(hook, { url: `https://${address}/admit`, caBundle })]);
            const refused = await eventually(async () => {
              const answer = await configMapUnder(acme, hook);
              return answer.includes("code 403") ? answer : undefined;
            }, 30_000);
            messages.add(refused.replaceAll(hook, "<hook>").replaceAll(address, "<address>"));
            await tenantKubectl(acme, ["delete", "validatingwebhookconfiguration", hook]);
          }
          expect([...messages]).toHaveLength(1);
          expect([...messages][0]).toMatch(/proxy error .*while dialing <address>, code 403/);
          // Each refusal is the operator's to see: an audit event in the tenant's name.
          const audited = await eventually(async () => {
            const events = await (world as DataPlaneWorld).db.auditEvent.findMany({
              where: { tenant: acme, action: "egress.refused" },
            });
            const seen = new Set(events.map((event) => event.target));
            return Object.values(targets).every((address) => seen.has(address)) ? events : undefined;
          }, 15_000);
          expect(audited[0]).toMatchObject({ actorName: "Ring0", result: "denied", targetKind: "address" });
        });
      });

      describe("their own cluster's identity and API (issue 18)", () => {
        const apiPod = "whoami";
        /** Run in a tenant's pod, a non-zero exit returned. */
        const inPod = (tenant: string, script: string) =>
          tenantKubectl(tenant, ["exec", apiPod, "--", "sh", "-c", script]);
        /** Ring0's kubectl image's kubectl in the pod, with no kubeconfig: its in-cluster config (TLS verified). */
        const inCluster = (tenant: string, args: string) => inPod(tenant, `kubectl ${args} 2>&1`);
        /** A pod of `tenant` that only sleeps (an hour), from `image`. */
        const runSleeper = (tenant: string, name: string, image: string) =>
          tenantKubectl(tenant, [
            "run",
            name,
            `--image=${image}`,
            "--restart=Never",
            "--command",
            "--",
            "sleep",
            "3600",
          ]);

        beforeAll(async () => {
          for (const tenant of [acme, globex]) {
            const created = await runSleeper(tenant, apiPod, KUBECTL_IMAGE);
            expect(created.stderr).toBe("");
          }
          for (const tenant of [acme, globex]) {
            await eventually(async () => {
              const got = await tenantKubectl(tenant, [
                "get",
                "pod",
                apiPod,
                "-o",
                "jsonpath={.status.phase}",
              ]);
              return got.stdout === "Running" ? true : undefined;
            }, 120_000);
          }
        }, 300_000);

        it("a pod's in-cluster kubectl is its own service account of its own tenant, bound to the pod", async () => {
          const env = await inPod(acme, "echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT");
          const access = await world?.provisioner.access(acme);
          expect(access?.podEndpoint).toBeDefined();
          expect(env.stdout.trim()).toBe(`${POD_API_ADDRESS}:${access?.podEndpoint?.port}`);
          const files = await inPod(
            acme,
            "cd /var/run/secrets/kubernetes.io/serviceaccount && cat namespace ca.crt",
          );
          expect(files.stdout).toBe(`default${access?.ca}`);
          const whoami = await inCluster(acme, "auth whoami -o json");
          const user = (JSON.parse(whoami.stdout) as { status: { userInfo: Record<string, unknown> } }).status
            .userInfo;
          expect(user.username).toBe("system:serviceaccount:default:default");
          // Bound to the tenant's pod (it dies with the pod), and naming its node as a kubelet's token does.
          expect(user.extra).toMatchObject({
            "authentication.kubernetes.io/pod-name": [apiPod],
            "authentication.kubernetes.io/node-name": [plan.name],
          });
          // The kubelet's wait for the pod's tokens below is not the tenant's to see.
          const events = await tenantKubectl(acme, [
            "get",
            "events",
            "--field-selector",
            `involvedObject.name=${apiPod}`,
            "-o",
            "json",
          ]);
          expect(events.code).toBe(0);
          expect(events.stdout).not.toContain(IDENTITY_SECRET_PREFIX);
        });

        it("sees its tenant's pods as its service account's RBAC allows, and nothing else", async () => {
          expect((await inCluster(acme, "get pods")).stdout).toContain(
            'User "system:serviceaccount:default:default" cannot list resource "pods"',
          );
          for (const args of [
            ["create", "role", "pod-reader", "--verb=list", "--resource=pods"],
            ["create", "rolebinding", "pod-reader", "--role=pod-reader", "--serviceaccount=default:default"],
          ]) {
            expect((await tenantKubectl(acme, args)).code).toBe(0);
          }
          const listed = await eventually(async () => {
            const result = await inCluster(acme, "get pods -o name");
            return result.code === 0 ? result : undefined;
          }, 30_000);
          expect(listed.stdout.split("\n")).toEqual(expect.arrayContaining([`pod/${apiPod}`, "pod/t"]));
          // Beyond the role in its own tenant; and globex's pod sees its own tenant only.
          expect((await inCluster(acme, "get pods -n kube-system")).code).not.toBe(0);
          expect((await inCluster(globex, "get pods -n default")).stdout).toContain("cannot list");
        });

        it("a Deployment whose pod runs kubectl get pods in a loop shows its tenant's pods in its log", async () => {
          const created = await tenantKubectl(acme, [
            "create",
            "deployment",
            "lister",
            `--image=${KUBECTL_IMAGE}`,
            "--",
            "sh",
            "-c",
            "while true; do kubectl get pods -o name; sleep 2; done",
          ]);
          expect(created.code, created.stderr).toBe(0);
          const logs = await eventually(async () => {
            const result = await tenantKubectl(acme, ["logs", "deploy/lister"]);
            return result.stdout.includes(`pod/${apiPod}`) ? result : undefined;
          }, 120_000);
          expect(logs.stdout).toMatch(/^pod\/lister-/m);
          expect((await tenantKubectl(acme, ["delete", "deployment", "lister"])).code).toBe(0);
        });

        it("pods keep their gateway as other pods come and go: the bridge's MAC is its own, never a port's", async () => {
          // A bridge takes its lowest port's MAC unless it has one of its own; deleting that pod then
          // changed the gateway's MAC under every other pod's cached neighbour entry, and they lost
          // DNS and their API server for half a minute (seen as i/o timeouts to the pod API address).
          expect(bridgeMacOf(plan.bridge)).toBe(plan.bridgeMac);
          for (const name of ["churn-1", "churn-2"]) {
            const created = await runSleeper(acme, name, TOOLBOX_IMAGE);
            expect(created.code, created.stderr).toBe(0);
          }
          await eventually(async () => {
            const got = await tenantKubectl(acme, [
              "get",
              "pods",
              "churn-1",
              "churn-2",
              "-o",
              "jsonpath={.items[*].status.phase}",
            ]);
            return got.stdout === "Running Running" ? true : undefined;
          }, 120_000);
          const churnBelow = async () =>
            (
              await kubeRequest<{ items: { metadata: { name: string } }[] }>(conn, {
                path: `/api/v1/namespaces/${superNamespace(acme, "default")}/pods`,
              })
            ).items.filter((pod) => pod.metadata.name.startsWith("churn-")).length;
          expect(await churnBelow()).toBe(2);
          const deleted = await tenantKubectl(acme, [
            "delete",
            "pod",
            "churn-1",
            "churn-2",
            "--now",
            "--wait",
          ]);
          expect(deleted.code, deleted.stderr).toBe(0);
          await eventually(async () => ((await churnBelow()) === 0 ? true : undefined), 60_000);
          expect(bridgeMacOf(plan.bridge)).toBe(plan.bridgeMac);
          // Another pod's API server answers it at once, and its neighbour entry for its gateway names that MAC.
          expect((await inCluster(globex, "auth whoami")).stdout).toContain(
            "system:serviceaccount:default:default",
          );
          const arp = await inPod(globex, "cat /proc/net/arp");
          expect(arp.stdout).toMatch(
            new RegExp(`^${plan.nodeIp.replaceAll(".", "\\.")}\\s.*${plan.bridgeMac}`, "m"),
          );
        });

        it("the tenant's `kubernetes` Service leads to the same address", async () => {
          const slices = await tenantKubectl(acme, [
            "get",
            "endpointslices",
            "-n",
            "default",
            "-l",
            "kubernetes.io/service-name=kubernetes",
            "-o",
            "jsonpath={.items[0].endpoints[0].addresses[0]}:{.items[0].ports[0].port}",
          ]);
          const access = await world?.provisioner.access(acme);
          expect(slices.stdout).toBe(`${POD_API_ADDRESS}:${access?.podEndpoint?.port}`);
        });

        it("another tenant's pod cannot even open a connection to acme's API server", async () => {
          const port = (await world?.provisioner.access(acme))?.podEndpoint?.port;
          // globex's own API answers its pod…
          expect((await inCluster(globex, "auth whoami")).stdout).toContain(
            "system:serviceaccount:default:default",
          );
          // …acme's listener closes globex's connection before TLS starts, token or not.
          const attack = await inCluster(
            globex,
            `--server https://${POD_API_ADDRESS}:${port} --insecure-skip-tls-verify --request-timeout 5s get --raw /version`,
          );
          expect(attack.code).not.toBe(0);
          expect(attack.stdout).not.toContain("gitVersion");
          // Nothing else on that address answers a pod: a wildcard listener of this host stays out of
          // reach (the wall admits only sockets bound to exactly the pod API address).
          const wildcard = net.createServer((socket) => socket.end("host secret\n"));
          await new Promise<void>((resolve) => wildcard.listen(0, "0.0.0.0", resolve));
          try {
            const probe = await inPod(
              globex,
              `nc -w 3 ${POD_API_ADDRESS} ${(wildcard.address() as net.AddressInfo).port} </dev/null; echo "exit=$?"`,
            );
            expect(probe.stdout).not.toContain("host secret");
            expect(probe.stdout).toMatch(/exit=[1-9]/);
          } finally {
            wildcard.close();
          }
        });

        it("a tenant pod cannot forge frames on the shared bridge: it holds no raw sockets", async () => {
          const status = await inPod(acme, "grep CapEff /proc/self/status");
          const effective = BigInt(`0x${status.stdout.trim().split(/\s+/)[1]}`);
          expect(effective & (1n << 13n)).toBe(0n); // CAP_NET_RAW
          // Claiming globex's pod address on the bridge (ARP) is refused by the kernel.
          const victim = await tenantKubectl(globex, [
            "get",
            "pod",
            apiPod,
            "-o",
            "jsonpath={.status.podIP}",
          ]);
          expect(victim.stdout).toMatch(/^10\.244\./);
          const forged = await inPod(
            acme,
            `arping -c 1 -w 2 -U -s ${victim.stdout} -I eth0 ${plan.nodeIp} 2>&1; echo "exit=$?"`,
          );
          expect(forged.stdout).toMatch(/not permitted|permission denied/i);
          expect(forged.stdout).not.toContain("exit=0");
        });

        it("no token of the super cluster is mounted below", async () => {
          const below = await kubeRequest<{
            spec: { automountServiceAccountToken?: boolean; volumes?: unknown[] };
          }>(conn, { path: `/api/v1/namespaces/${superNamespace(acme, "default")}/pods/${apiPod}` });
          expect(below.spec.automountServiceAccountToken).toBe(false);
          expect(JSON.stringify(below.spec.volumes)).not.toContain("serviceAccountToken");
          expect(JSON.stringify(below.spec.volumes)).toContain(IDENTITY_SECRET_PREFIX);
        });

        describe("DNS and the network walls: each tenant's pods find and reach their own tenant's", () => {
          let webIp = "";
          /** An address of the service range no Service holds, below or in acme. */
          const freeServiceAddress = async () => {
            const held = new Set<string>();
            for (const text of [
              await kubectl("get", "services", "-A", "-o", "jsonpath={.items[*].spec.clusterIP}"),
              (
                await tenantKubectl(acme, [
                  "get",
                  "services",
                  "-A",
                  "-o",
                  "jsonpath={.items[*].spec.clusterIP}",
                ])
              ).stdout,
            ]) {
              for (const address of text.split(/\s+/)) held.add(address);
            }
            for (let last = 200; last < 250; last++) if (!held.has(`10.0.0.${last}`)) return `10.0.0.${last}`;
            throw new Error("no free service address");
          };
          beforeAll(async () => {
            await applyAs(acme, [
              {
                apiVersion: "v1",
                kind: "Pod",
                metadata: { name: "site", labels: { app: "site" } },
                spec: {
                  terminationGracePeriodSeconds: 1,
                  containers: [{ name: "site", image: HTTPD_IMAGE, ports: [{ containerPort: 8080 }] }],
                },
              },
              {
                apiVersion: "v1",
                kind: "Service",
                metadata: { name: "web" },
                // An address free on both sides, so the copy gets it (a taken one is tested in the syncer's suite).
                spec: {
                  clusterIP: await freeServiceAddress(),
                  selector: { app: "site" },
                  ports: [{ name: "http", port: 80, targetPort: 8080 }],
                },
              },
            ]);
            await runningInTenant("site");
            const below = await eventually(
              () =>
                kubeRequest<{ spec: { clusterIP?: string } }>(conn, {
                  path: `/api/v1/namespaces/${superNamespace(acme, "default")}/services/web`,
                }).catch(() => undefined),
              60_000,
            );
            webIp = below.spec.clusterIP as string;
            expect(webIp).toMatch(/^10\.0\.0\./);
            // The tenant's Service and its copy have one address: what DNS answers is what the tenant sees.
            const own = await tenantKubectl(acme, [
              "get",
              "service",
              "web",
              "-o",
              "jsonpath={.spec.clusterIP}",
            ]);
            expect(own.stdout).toBe(webIp);
          }, 180_000);

          it("nslookup web.default from acme's pod answers, and the answer serves acme's web", async () => {
            const resolv = await inPod(acme, "cat /etc/resolv.conf");
            expect(resolv.stdout).toContain(`nameserver ${POD_API_ADDRESS}`);
            expect(resolv.stdout).toContain(
              "search default.svc.cluster.local svc.cluster.local cluster.local",
            );
            for (const [name, answered] of [
              ["web.default", "web.default"],
              ["web", "web.default.svc.cluster.local"],
              ["web.default.svc.cluster.local", "web.default.svc.cluster.local"],
            ]) {
              const answer = await inPod(acme, `nslookup ${name} 2>&1`);
              expect(answer.stdout, name).toContain(`Name:\t${answered}\n`);
              expect(answer.stdout, name).toContain(`Address: ${webIp}`);
            }
            const served = await eventually(async () => {
              const got = await inPod(acme, `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${webIp} 80`);
              return got.stdout.includes("200 OK") ? got.stdout : undefined;
            }, 60_000);
            expect(served).toContain("site");
            // The tenant's API server by its Service name, and a port by its SRV record.
            expect((await inPod(acme, "nslookup kubernetes.default 2>&1")).stdout).toContain(
              `Address: ${POD_API_ADDRESS}`,
            );
            const srv = await inPod(acme, "nslookup -type=SRV _http._tcp.web.default.svc.cluster.local 2>&1");
            expect(srv.stdout).toMatch(/port = 80|\s80\s+web\.default\.svc\.cluster\.local/);
          });

          it("from globex's pod, acme's Services do not exist, by any name", async () => {
            for (const name of [
              "web.default",
              "web",
              "web.default.svc.cluster.local",
              `web.${superNamespace(acme, "default")}.svc.cluster.local`,
            ]) {
              const answer = await inPod(globex, `nslookup ${name} 2>&1`);
              expect(answer.stdout, name).toMatch(/can't find .*: (NXDOMAIN|REFUSED)/);
              expect(answer.stdout, name).not.toContain(webIp);
            }
            // Nothing beyond the cluster's names is resolved for a pod (no path to other resolvers).
            const outside = await inPod(globex, "nslookup example.com 2>&1");
            expect(outside.stdout).toMatch(/REFUSED/);
          });

          /** What an HTTP GET from `tenant`'s pod to `address` got (nothing when refused). */
          const httpFrom = async (tenant: string, address: string) =>
            (await inPod(tenant, `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${address}; echo "exit=$?"`))
              .stdout;
          const sitePodIp = async () =>
            (await tenantKubectl(acme, ["get", "pod", "site", "-o", "jsonpath={.status.podIP}"])).stdout;

          it("globex's pod cannot open a connection to acme's pod or Service, while acme's own can", async () => {
            const podIp = await sitePodIp();
            expect(podIp).toMatch(/^10\.244\./);
            expect(await httpFrom(acme, `${podIp} 8080`)).toContain("200 OK");
            expect(await httpFrom(acme, `${webIp} 80`)).toContain("200 OK");
            for (const target of [`${podIp} 8080`, `${webIp} 80`]) {
              const attempt = await httpFrom(globex, target);
              expect(attempt, target).not.toContain("200 OK");
              expect(attempt, target).toMatch(/exit=[1-9]/);
            }
          });

          it("a tenant's own NetworkPolicy denying ingress within acme is enforced, and lifting it lets traffic back", async () => {
            const podIp = await sitePodIp();
            await applyAs(acme, [
              {
                apiVersion: "networking.k8s.io/v1",
                kind: "NetworkPolicy",
                metadata: { name: "site-closed" },
                spec: { podSelector: { matchLabels: { app: "site" } }, policyTypes: ["Ingress"] },
              },
            ]);
            // Copied below into acme's namespace, where kube-router enforces it.
            await eventually(
              () =>
                kubeRequest(conn, {
                  path: `/apis/networking.k8s.io/v1/namespaces/${superNamespace(acme, "default")}/networkpolicies/site-closed`,
                }).catch(() => undefined),
              60_000,
            );
            const denied = await eventually(async () => {
              const got = await httpFrom(acme, `${podIp} 8080`);
              return got.includes("200 OK") ? undefined : got;
            }, 90_000);
            expect(denied).toMatch(/exit=[1-9]/);
            expect(await httpFrom(acme, `${webIp} 80`)).not.toContain("200 OK");
            // A policy admitting acme's whoami pod (by label, from every namespace of acme) opens it to that pod only.
            await applyAs(acme, [
              {
                apiVersion: "networking.k8s.io/v1",
                kind: "NetworkPolicy",
                metadata: { name: "site-from-whoami" },
                spec: {
                  podSelector: { matchLabels: { app: "site" } },
                  ingress: [
                    { from: [{ namespaceSelector: {}, podSelector: { matchLabels: { run: apiPod } } }] },
                  ],
                },
              },
            ]);
            await eventually(
              async () => ((await httpFrom(acme, `${podIp} 8080`)).includes("200 OK") ? true : undefined),
              90_000,
            );
            // globex's pod still reaches nothing of acme: the tenant wall comes before any policy.
            expect(await httpFrom(globex, `${podIp} 8080`)).not.toContain("200 OK");
            const removed = await tenantKubectl(acme, [
              "delete",
              "networkpolicy",
              "site-closed",
              "site-from-whoami",
            ]);
            expect(removed.code, removed.stderr).toBe(0);
            await eventually(
              async () => ((await httpFrom(acme, `${webIp} 80`)).includes("200 OK") ? true : undefined),
              90_000,
            );
          });

          it("answers no one but tenants' pods", async () => {
            const query = Buffer.from(
              "abcd01000001000000000000037765620764656661756c740373766307636c7573746572056c6f63616c0000010001",
              "hex",
            );
            const client = dgram.createSocket("udp4");
            try {
              const reply = await new Promise<Buffer>((resolve, reject) => {
                client.once("message", resolve);
                client.once("error", reject);
                client.send(query, 53, POD_API_ADDRESS);
                setTimeout(() => reject(new Error("no reply")), 5_000).unref();
              });
              expect(reply.readUInt16BE(0)).toBe(0xabcd);
              expect(reply.readUInt16BE(2) & 0xf).toBe(5); // REFUSED
              expect(reply.readUInt16BE(6)).toBe(0); // no answers
            } finally {
              client.close();
            }
          });
        });
      });

      describe("storage: claims on local volumes of the real node (issue 18)", () => {
        const statefulSet = {
          apiVersion: "apps/v1",
          kind: "StatefulSet",
          metadata: { name: "db" },
          spec: {
            serviceName: "db",
            replicas: 1,
            selector: { matchLabels: { app: "db" } },
            template: {
              metadata: { labels: { app: "db" } },
              spec: {
                terminationGracePeriodSeconds: 1,
                containers: [
                  {
                    name: "db",
                    image: TOOLBOX_IMAGE,
                    command: [
                      "sh",
                      "-c",
                      'test -f /data/first || echo "$(hostname) $RANDOM$RANDOM" > /data/first; echo boot >> /data/boots; exec sleep 3600',
                    ],
                    volumeMounts: [{ name: "data", mountPath: "/data" }],
                  },
                ],
              },
            },
            volumeClaimTemplates: [
              {
                metadata: { name: "data" },
                spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "64Mi" } } },
              },
            ],
          },
        };
        const podUid = async (tenant: string, name: string) =>
          (await tenantKubectl(tenant, ["get", "pod", name, "-o", "jsonpath={.metadata.uid}"])).stdout;
        const runningAgain = (tenant: string, name: string, notUid: string) =>
          eventually(async () => {
            const got = await tenantKubectl(tenant, ["get", "pod", name, "-o", "json"]);
            if (got.code !== 0) return undefined;
            const pod = JSON.parse(got.stdout) as { metadata: { uid: string }; status?: { phase?: string } };
            return pod.metadata.uid !== notUid && pod.status?.phase === "Running" ? pod : undefined;
          }, 180_000);
        const claimBelow = (tenant: string, name: string) =>
          kubeRequest<{
            metadata: { annotations?: Record<string, string> };
            spec: { volumeName?: string; storageClassName?: string };
            status: { phase?: string };
          }>(conn, {
            path: `/api/v1/namespaces/${superNamespace(tenant, "default")}/persistentvolumeclaims/${name}`,
          });
        let volumeName = "";

        it("a StatefulSet's claim gets a volume on the real node, bound in the tenant too, and its data survives the pod", async () => {
          // The tenant has the class it may name, as its default.
          const classes = await tenantKubectl(acme, ["get", "storageclass", "-o", "json"]);
          const offered = (
            JSON.parse(classes.stdout) as {
              items: { metadata: { name: string; annotations?: Record<string, string> } }[];
            }
          ).items;
          expect(offered.map((entry) => entry.metadata.name)).toEqual(["ring0-local"]);
          expect(offered[0]?.metadata.annotations?.["storageclass.kubernetes.io/is-default-class"]).toBe(
            "true",
          );
          await applyAs(acme, [statefulSet]);
          const first = await runningAgain(acme, "db-0", "");
          const data = await tenantKubectl(acme, ["exec", "db-0", "--", "cat", "/data/first"]);
          expect(data.stdout).toMatch(/^db-0 \d+\n$/);
          // Bound below to a volume Ring0 made under the node's files, and bound up to its namesake.
          const below = await eventually(async () => {
            const claim = await claimBelow(acme, "data-db-0");
            return claim.status.phase === "Bound" ? claim : undefined;
          }, 60_000);
          expect(below.spec.storageClassName).toBe("ring0-local");
          volumeName = below.spec.volumeName as string;
          const superVolume = await kubeRequest<{ spec: { local?: { path: string } } }>(conn, {
            path: `/api/v1/persistentvolumes/${volumeName}`,
          });
          expect(superVolume.spec.local?.path).toBe(
            path.join(realNodesDir(stateDir), plan.name, "volumes", volumeName),
          );
          expect(fs.readFileSync(path.join(superVolume.spec.local?.path as string, "first"), "utf8")).toBe(
            data.stdout,
          );
          const claim = await eventually(async () => {
            const got = await tenantKubectl(acme, ["get", "pvc", "data-db-0", "-o", "json"]);
            const parsed = JSON.parse(got.stdout || "{}") as {
              spec?: { volumeName?: string };
              status?: { phase?: string; capacity?: { storage?: string } };
            };
            return parsed.status?.phase === "Bound" ? parsed : undefined;
          }, 60_000);
          expect(claim.spec?.volumeName).toBe(volumeName);
          expect(claim.status?.capacity?.storage).toBe("64Mi");
          const tenantVolume = await tenantKubectl(acme, ["get", "pv", volumeName, "-o", "json"]);
          expect(tenantVolume.stdout).not.toContain(stateDir);
          // The pod goes; its replacement mounts the same data.
          const deleted = await tenantKubectl(acme, ["delete", "pod", "db-0", "--wait=false"]);
          expect(deleted.code, deleted.stderr).toBe(0);
          await runningAgain(acme, "db-0", first.metadata.uid);
          const again = await tenantKubectl(acme, [
            "exec",
            "db-0",
            "--",
            "cat",
            "/data/first",
            "/data/boots",
          ]);
          expect(again.stdout).toBe(`${data.stdout}boot\nboot\n`);
          expect(await podUid(acme, "db-0")).not.toBe(first.metadata.uid);
        });

        it("another tenant's claim naming that volume gets a new, empty one", async () => {
          await applyAs(globex, [
            {
              apiVersion: "v1",
              kind: "PersistentVolumeClaim",
              // Kubernetes' own annotations that would pick the node (or class) below are not the tenant's to set.
              metadata: {
                name: "steal",
                annotations: { "volume.kubernetes.io/selected-node": "ring0-node-0" },
              },
              spec: {
                accessModes: ["ReadWriteOnce"],
                resources: { requests: { storage: "64Mi" } },
                storageClassName: "ring0-local",
                volumeName,
              },
            },
            {
              apiVersion: "v1",
              kind: "Pod",
              metadata: { name: "thief" },
              spec: {
                terminationGracePeriodSeconds: 1,
                containers: [
                  {
                    name: "thief",
                    image: TOOLBOX_IMAGE,
                    command: ["sh", "-c", "ls -A /data; echo listed; exec sleep 3600"],
                    volumeMounts: [{ name: "data", mountPath: "/data" }],
                  },
                ],
                volumes: [{ name: "data", persistentVolumeClaim: { claimName: "steal" } }],
              },
            },
          ]);
          const logs = await eventually(async () => {
            const got = await tenantKubectl(globex, ["logs", "thief"]);
            return got.stdout.includes("listed") ? got.stdout : undefined;
          }, 120_000);
          expect(logs).toBe("listed\n");
          const below = await claimBelow(globex, "steal");
          expect(below.spec.volumeName).toBeDefined();
          expect(below.spec.volumeName).not.toBe(volumeName);
          expect(below.metadata.annotations?.["volume.kubernetes.io/selected-node"]).toBe(plan.name);
        });

        it("refuses a claim that picks existing data or a class not offered, saying why", async () => {
          await applyAs(acme, [
            {
              apiVersion: "v1",
              kind: "PersistentVolumeClaim",
              metadata: { name: "elsewhere" },
              spec: {
                accessModes: ["ReadWriteOnce"],
                resources: { requests: { storage: "64Mi" } },
                storageClassName: "host-disks",
              },
            },
            {
              apiVersion: "v1",
              kind: "PersistentVolumeClaim",
              metadata: { name: "picky" },
              spec: {
                accessModes: ["ReadWriteOnce"],
                resources: { requests: { storage: "64Mi" } },
                selector: { matchLabels: { "ring0.dev/local-volume": "true" } },
              },
            },
          ]);
          for (const [name, text] of [
            ["elsewhere", 'names storage class "host-disks", which the operator does not offer'],
            ["picky", "sets spec.selector"],
          ] as const) {
            const event = await eventually(async () => {
              const got = await tenantKubectl(acme, [
                "get",
                "events",
                "--field-selector",
                `involvedObject.name=${name},reason=SyncRefused`,
                "-o",
                "jsonpath={.items[*].message}",
              ]);
              return got.stdout.includes(text) ? got.stdout : undefined;
            }, 60_000);
            expect(event).toContain(text);
            await expect(claimBelow(acme, name)).rejects.toThrow();
          }
        });

        it("deleting the claim removes the volume below, its files on the node and its namesake in the tenant", async () => {
          const dir = path.join(realNodesDir(stateDir), plan.name, "volumes", volumeName);
          expect(fs.existsSync(dir)).toBe(true);
          for (const args of [
            ["delete", "statefulset", "db", "--wait=true"],
            ["delete", "pod", "db-0", "--ignore-not-found", "--wait=true"],
            ["delete", "pvc", "data-db-0", "--wait=true"],
          ]) {
            const done = await tenantKubectl(acme, args);
            expect(done.code, done.stderr).toBe(0);
          }
          await eventually(async () => {
            const gone = await kubeRequest(conn, { path: `/api/v1/persistentvolumes/${volumeName}` }).then(
              () => false,
              () => true,
            );
            return gone && !fs.existsSync(dir) ? true : undefined;
          }, 120_000);
          await eventually(async () => {
            const got = await tenantKubectl(acme, ["get", "pv", volumeName]);
            return got.code !== 0 && got.stderr.includes("NotFound") ? true : undefined;
          }, 60_000);
        });
      });

      describe("a sandboxed runtime (issue 18)", () => {
        const sandboxed = (name: string, overrides?: object) =>
          tenantKubectl(acme, [
            "run",
            name,
            `--image=${TOOLBOX_IMAGE}`,
            "--restart=Never",
            ...(overrides ? [`--overrides=${JSON.stringify({ apiVersion: "v1", ...overrides })}`] : []),
            "--command",
            "--",
            "sh",
            "-c",
            // dmesg's refusal (outside the sandbox) through the same pipe: stdout and stderr are
            // logged from two pipes, and their lines may come out of order.
            "uname -r; dmesg 2>&1 | head -n 3; exec sleep 3600",
          ]);
        /** What the pod printed: its kernel's release, then the start of its kernel log. */
        const kernelOf = (name: string) =>
          eventually(async () => {
            const logs = await tenantKubectl(acme, ["logs", name]);
            return logs.code === 0 && logs.stdout.split("\n").length > 2 ? logs.stdout : undefined;
          }, 120_000);
        const belowOf = (name: string) =>
          kubeRequest<{ spec: { runtimeClassName?: string; nodeName?: string } }>(conn, {
            path: `/api/v1/namespaces/${superNamespace(acme, "default")}/pods/${name}`,
          });

        it("a pod of the ring0-gvisor runtime class runs on gVisor's kernel, not the host's", async () => {
          // The tenant has the class it may name (its API server refuses a pod naming an unknown one).
          const classes = await tenantKubectl(acme, ["get", "runtimeclass", "ring0-gvisor", "-o", "json"]);
          expect(classes.code, classes.stderr).toBe(0);
          expect(JSON.parse(classes.stdout)).toMatchObject({ handler: "runsc" });
          const created = await sandboxed("sandboxed", { spec: { runtimeClassName: "ring0-gvisor" } });
          expect(created.code, created.stderr).toBe(0);
          await runningInTenant("sandboxed");
          const kernel = await kernelOf("sandboxed");
          expect(kernel.split("\n")[0]).not.toBe(os.release());
          expect(kernel).toContain("Starting gVisor");
          expect(await belowOf("sandboxed")).toMatchObject({
            spec: { runtimeClassName: "ring0-gvisor", nodeName: plan.name },
          });
          // The same image under the nodes' default runtime shares the host's kernel.
          const plain = await sandboxed("unsandboxed");
          expect(plain.code, plain.stderr).toBe(0);
          await runningInTenant("unsandboxed");
          expect((await kernelOf("unsandboxed")).split("\n")[0]).toBe(os.release());
        });

        it("a Tenant's default runtime class sandboxes the pods that name none", async () => {
          await kubeRequest(conn, {
            method: "PATCH",
            path: `/apis/ring0.dev/v1alpha1/tenants/${acme}`,
            contentType: "application/merge-patch+json",
            body: { spec: { syncer: { runtimeClass: "ring0-gvisor" } } },
          });
          try {
            const created = await eventually(async () => {
              // The syncer reads the Tenant's change as it watches it; a pod made before then is not sandboxed.
              await tenantKubectl(acme, ["delete", "pod", "by-default", "--now", "--ignore-not-found"]);
              const made = await sandboxed("by-default");
              expect(made.code, made.stderr).toBe(0);
              await runningInTenant("by-default");
              const below = await belowOf("by-default");
              return below.spec.runtimeClassName === "ring0-gvisor" ? below : undefined;
            }, 120_000);
            expect(created.spec.nodeName).toBe(plan.name);
            expect(await kernelOf("by-default")).toContain("Starting gVisor");
          } finally {
            await kubeRequest(conn, {
              method: "PATCH",
              path: `/apis/ring0.dev/v1alpha1/tenants/${acme}`,
              contentType: "application/merge-patch+json",
              body: { spec: { syncer: { runtimeClass: null } } },
            });
          }
        });

        it("a runtime class the operator does not allow never reaches the node, and the tenant is told which are", async () => {
          // Tenant admins may define classes in their own control plane; that does not make them run.
          await applyAs(acme, [
            {
              apiVersion: "node.k8s.io/v1",
              kind: "RuntimeClass",
              metadata: { name: "unconfined" },
              handler: "runc",
            },
          ]);
          const created = await sandboxed("unconfined", { spec: { runtimeClassName: "unconfined" } });
          expect(created.code, created.stderr).toBe(0);
          const condition = await eventually(async () => {
            const got = await tenantKubectl(acme, ["get", "pod", "unconfined", "-o", "json"]);
            const pod = JSON.parse(got.stdout || "{}") as {
              status?: { conditions?: { type: string; message?: string }[] };
            };
            return pod.status?.conditions?.find((entry) => entry.type === "ring0.dev/Isolation");
          }, 60_000);
          expect(condition.message).toContain('Runtime class "unconfined" is not one the operator allows');
          expect(condition.message).toContain('"ring0-gvisor"');
          await expect(belowOf("unconfined")).rejects.toThrow();
        });
      });

      it("another tenant reaches none of it", async () => {
        const exec = await tenantKubectl(globex, ["exec", "t", "--", "hostname"]);
        expect(exec.code).not.toBe(0);
        expect(exec.stdout).toBe("");
        const logs = await tenantKubectl(globex, ["logs", "t"]);
        expect(logs.stderr).toContain("NotFound");
        const attach = await tenantKubectl(globex, ["attach", "echo"]);
        expect(attach.code).not.toBe(0);
        expect(attach.stderr).toMatch(/NotFound|not found/);
      });
    });

    it("leaves no process, mount, bridge, cgroup, netns or firewall rule behind on cluster:down", async () => {
      wall?.stop();
      await cluster.down();
      expect(processesMentioning(`${path.join(stateDir, "real-nodes")}/`)).toEqual([]);
      // The registry stops with the nodes; its images stay on disk for the next up.
      expect(processesMentioning(registryPlan(stateDir).config)).toEqual([]);
      expect(fs.readdirSync(registryPlan(stateDir).storage).length).toBeGreaterThan(0);
      expect(mountsUnder(stateDir)).toEqual([]);
      // Its runtime state (pod network namespaces) lives under /run: gone too.
      expect(mountsUnder(plan.runtimeDir)).toEqual([]);
      expect(fs.existsSync(plan.runtimeDir)).toBe(false);
      expect(fs.existsSync(`/sys/class/net/${plan.bridge}`)).toBe(false);
      for (const hierarchy of fs.readdirSync("/sys/fs/cgroup")) {
        expect(fs.existsSync(path.join("/sys/fs/cgroup", hierarchy, plan.cgroupRoot))).toBe(false);
      }
      for (const binary of ["iptables", "ip6tables"]) {
        for (const table of ["filter", "mangle", "nat"]) {
          const rules = (await run(binary, ["-w", "5", "-t", table, "-S"], { timeoutMs: 30_000 })).stdout;
          expect(rules, `${binary} ${table}`).not.toMatch(/RING0-|KUBE-/);
        }
      }
      // Neither the tenant wall's address sets nor kube-router's.
      const sets = (await run("ipset", ["list", "-n"], { timeoutMs: 30_000 })).stdout;
      expect(sets).not.toMatch(/ring0-|kube-router|KUBE-/i);
      // The sink's device and routes go with the wall too.
      expect(fs.existsSync(`/sys/class/net/${SINK_DEVICE}`)).toBe(false);
      // The tenants' pod API address goes with the wall.
      expect(
        (await run("ip", ["-o", "addr", "show", "dev", "lo"], { timeoutMs: 30_000 })).stdout,
      ).not.toContain(POD_API_ADDRESS);
      const cache = fs.existsSync("/var/lib/cni/results") ? fs.readdirSync("/var/lib/cni/results") : [];
      for (const entry of cache) {
        const text = fs.readFileSync(path.join("/var/lib/cni/results", entry), "utf8");
        expect(text).not.toContain(stateDir);
        expect(text).not.toContain(plan.runtimeDir);
      }
    }, 300_000);
  },
);
