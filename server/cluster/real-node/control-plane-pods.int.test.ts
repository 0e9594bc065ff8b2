/**
 * Tenant control planes as pods (the `kubernetes` provisioner, issue 19) on a local super cluster
 * with a real node: etcd, kube-apiserver and kube-controller-manager from the images Ring0 builds,
 * pulled from Ring0's registry, etcd's data on a `ring0-local` volume; Ring0 on this host reaching
 * them at their Services' cluster IPs through the node's kube-proxy; tenants using them through the
 * kube gateway with the real kubectl; their pods on the real node reaching their own API server,
 * and nothing else of any control plane.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildControlPlaneImages } from "@/scripts/lib/control-plane-images";
import { syncQuotaWebhook } from "@/server/admission/registration";
import { startAdmission } from "@/server/admission/start";
import { type KubeObject, readObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { informerTenantSource } from "@/server/runtime/tenants";
import { superNamespace } from "@/server/syncer/naming";
import { kubeUserName, roleGroup } from "@/server/tenants/kube-identity";
import { type DataPlaneWorld, startDataPlaneWorld } from "@/test/integration/data-plane-world";
import {
  configMapWebhook,
  gadget,
  gadgetCrd,
  hookObjects,
  hookTls,
  impersonating,
  webhookConfigMap,
} from "@/test/integration/extensions";
import { removeOwnWorld } from "@/test/integration/own-world";
import { setTenantQuota, sleeperArgs } from "@/test/integration/tenant-objects";
import { startWorldGateway, type WorldGateway } from "@/test/integration/world-gateway";
import { kubeBinaries } from "../kwokctl";
import { type LocalSuperCluster, localSuperCluster } from "../local";
import { CommandError, processesMentioning, type RunResult, run } from "../process";
import { realNodePrerequisites } from "./host";
import { KUBECTL_IMAGE, POD_API_ADDRESS, realNodePlan, realNodesDir } from "./plan";
import { pushImageArchive } from "./registry";
import { startTenantWall, type TenantWall } from "./tenant-wall";

const problems = realNodePrerequisites();
const logger = createLogger({}, "warn");
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-control-plane-pods-"));
const plan = realNodePlan(stateDir, 0);
const suffix = Math.random().toString(36).slice(2, 7);
const initech = `initech-${suffix}`;
const hooli = `hooli-${suffix}`;
const cpNamespace = (tenant: string) => `ring0-cp-${tenant}`;

let cluster: LocalSuperCluster;
let conn: ClusterConnection;
let kubectlPath = "";
let superKubeconfig = "";
let wall: TenantWall | undefined;
let world: DataPlaneWorld | undefined;
let worldGateway: WorldGateway | undefined;
let admission: Awaited<ReturnType<typeof startAdmission>> | undefined;
let tenantSource: ReturnType<typeof informerTenantSource> | undefined;
let home = "";
const kubeconfigs: Record<string, string> = {};

type Pod = KubeObject & {
  spec: { nodeName?: string; containers: { image: string }[] };
  status?: { phase?: string; podIP?: string };
};
type Service = KubeObject & { spec: { clusterIP: string } };

/** The real kubectl; a non-zero exit is returned, not thrown. */
async function kubectlWith(kubeconfig: string, args: string[]): Promise<RunResult> {
  try {
    return await run(kubectlPath, ["--kubeconfig", kubeconfig, ...args], {
      timeoutMs: 60_000,
      env: { PATH: process.env.PATH ?? "", HOME: home },
    });
  } catch (error) {
    if (error instanceof CommandError) return error.result;
    throw error;
  }
}
const tenantKubectl = (tenant: string, args: string[]) => kubectlWith(kubeconfigs[tenant] as string, args);

/** A shell line in a tenant's pod, run by the operator in its copy below (the super cluster). */
async function inTenantPod(tenant: string, pod: string, script: string): Promise<string> {
  const result = await kubectlWith(superKubeconfig, [
    "exec",
    "-n",
    superNamespace(tenant, "default"),
    pod,
    "--",
    "sh",
    "-c",
    `echo PROBE-RAN; ${script}`,
  ]);
  const out = `${result.stdout}${result.stderr}`;
  expect(out, `the probe ran in ${tenant}'s pod ${pod}`).toContain("PROBE-RAN");
  return out;
}

const serviceIp = async (tenant: string, name: string) =>
  (
    await readObject<Service>(conn, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: cpNamespace(tenant) },
    })
  ).spec.clusterIP;

const controlPlanePods = async (tenant: string) =>
  (await kubeRequest<{ items: Pod[] }>(conn, { path: `/api/v1/namespaces/${cpNamespace(tenant)}/pods` }))
    .items;

describe.skipIf(problems.length > 0)(
  `tenant control planes as pods on a real node (${problems.join("; ") || "this host can run one"})`,
  { timeout: 240_000 },
  () => {
    beforeAll(async () => {
      cluster = localSuperCluster({ stateDir, logger });
      superKubeconfig = (await cluster.up({ nodes: 1, realNodes: 1 })).kubeconfig;
      conn = cluster.connect();
      kubectlPath = await cluster.kubectlPath();
      wall = await startTenantWall({ superCluster: conn, logger });
      // The control plane's images, built from Ring0's binaries and pushed as `./ring0 images build` does.
      const binDir = await kubeBinaries(logger, { build: false });
      for (const image of await buildControlPlaneImages({ binDir, outDir: path.join(stateDir, "images") })) {
        await pushImageArchive(stateDir, binDir, image.archive, { replace: true, logger });
      }
      world = await startDataPlaneWorld({
        tenants: [initech, hooli],
        logger,
        name: "control-plane-pods",
        superCluster: { connection: conn, stateDir },
        realNodes: true,
        tenantWall: false,
        controlPlanesInPods: true,
        // Ring0's admission webhooks, on the pod API address too, as the runtime starts them here:
        // before the control planes, which are made knowing where they listen.
        beforeControlPlanes: async ({ stateDir: worldStateDir, directory }) => {
          tenantSource = informerTenantSource(conn);
          const started = await startAdmission({
            stateDir: worldStateDir,
            tenants: tenantSource,
            directory,
            logger,
            recordRefusals: false,
            podApiAddress: POD_API_ADDRESS,
          });
          admission = started;
          return () => started.stop();
        },
      });
      home = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-control-plane-pods-home-"));
      worldGateway = await startWorldGateway(world, [initech, hooli], { home, logger });
      Object.assign(kubeconfigs, worldGateway.kubeconfigs);
    }, 900_000);

    afterAll(async () => {
      await worldGateway?.close();
      tenantSource?.release();
      await world?.stop();
      wall?.stop();
      await removeOwnWorld(cluster, stateDir, home);
    }, 300_000);

    it("runs each tenant's etcd, API server and controller manager as pods on the real node, etcd on a local volume", async () => {
      for (const tenant of [initech, hooli]) {
        const pods = await controlPlanePods(tenant);
        expect(pods.map((pod) => pod.metadata.labels?.["app.kubernetes.io/name"]).sort()).toEqual([
          "etcd",
          "kube-apiserver",
          "kube-controller-manager",
        ]);
        for (const pod of pods) {
          expect(pod.status?.phase).toBe("Running");
          expect(pod.spec.nodeName).toBe(plan.name);
          expect(pod.spec.containers[0]?.image).toMatch(/^registry\.k8s\.io\//);
        }
        const claim = await readObject<
          KubeObject & { spec: { storageClassName: string }; status: { phase: string } }
        >(conn, {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: "data-etcd-0", namespace: cpNamespace(tenant) },
        });
        expect(claim.spec.storageClassName).toBe("ring0-local");
        expect(claim.status.phase).toBe("Bound");
      }
      // Ring0 reaches each at its Service's cluster IP, from this host.
      const access = await world?.provisioner.access(initech);
      expect(access?.server).toBe(`https://${await serviceIp(initech, "kube-apiserver")}:6443`);
    });

    it("serves the tenant's admin through the kube gateway with the real kubectl", async () => {
      const version = await tenantKubectl(initech, ["version", "-o", "json"]);
      expect(version.code, version.stderr).toBe(0);
      expect(
        (JSON.parse(version.stdout) as { serverVersion: { gitVersion: string } }).serverVersion.gitVersion,
      ).toMatch(/^v1\.\d+\.\d+$/);
      const created = await tenantKubectl(initech, [
        "create",
        "configmap",
        "kept",
        "--from-literal=answer=42",
      ]);
      expect(created.code, created.stderr).toBe(0);
      const namespaces = await tenantKubectl(initech, ["get", "namespaces", "-o", "name"]);
      expect(namespaces.stdout).toContain("namespace/kube-system");
      // The controller manager works: the default namespace's root CA ConfigMap is published.
      await eventually(async () => {
        const got = await tenantKubectl(initech, ["get", "configmap", "kube-root-ca.crt", "-o", "name"]);
        return got.code === 0 ? true : undefined;
      }, 60_000);
    });

    it("finds a killed API server container at once, and serves again once the kubelet restarts it", async () => {
      const provisioner = world?.provisioner;
      if (!provisioner?.probe) throw new Error("the kubernetes provisioner has no probe");
      expect(await provisioner.probe(initech)).toBeUndefined();
      // The container's process, found by the issuer only this tenant's API server is started with.
      const pids = processesMentioning(
        `--service-account-issuer=https://kube-apiserver.${cpNamespace(initech)}.svc:6443`,
      );
      expect(pids.length).toBe(1);
      process.kill(pids[0] as number, "SIGKILL");
      const fault = await eventually(async () => (await provisioner.probe?.(initech)) ?? undefined, 30_000);
      // Its refused connections, or its pod's container status, whichever the probe sees first.
      expect(fault?.component).toBe("kube-apiserver");
      expect(["exited", "unresponsive"]).toContain(fault?.kind);
      await eventually(
        async () => ((await provisioner.probe?.(initech)) === undefined ? true : undefined),
        120_000,
      );
      const version = await tenantKubectl(initech, [
        "get",
        "configmap",
        "kept",
        "-o",
        "jsonpath={.data.answer}",
      ]);
      expect(version.stdout).toBe("42");
    });

    it("runs the tenant's pod on the real node: logs and exec through the gateway, its in-cluster kubectl reaching its own API server", async () => {
      for (const tenant of [initech, hooli]) {
        const created = await tenantKubectl(tenant, [
          "run",
          "whoami",
          `--image=${KUBECTL_IMAGE}`,
          "--restart=Never",
          "--command",
          "--",
          "sh",
          "-c",
          "echo whoami-started; exec sleep 3600",
        ]);
        expect(created.code, created.stderr).toBe(0);
      }
      for (const tenant of [initech, hooli]) {
        await eventually(async () => {
          const got = await tenantKubectl(tenant, ["get", "pod", "whoami", "-o", "jsonpath={.status.phase}"]);
          return got.stdout === "Running" ? true : undefined;
        }, 120_000);
      }
      const apiIp = await serviceIp(initech, "kube-apiserver");
      const env = await inTenantPod(
        initech,
        "whoami",
        "echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT",
      );
      expect(env).toContain(`${apiIp}:6443`);
      const whoami = await inTenantPod(
        initech,
        "whoami",
        "kubectl auth whoami -o jsonpath={.status.userInfo.username}",
      );
      expect(whoami).toContain("system:serviceaccount:default:default");
      // kubectl logs and exec through the gateway: its API server in a pod reaches the vn-agents.
      const logs = await tenantKubectl(initech, ["logs", "whoami"]);
      expect(logs.stdout, logs.stderr).toContain("whoami-started");
      const exec = await tenantKubectl(initech, ["exec", "whoami", "--", "cat", "/etc/hostname"]);
      expect(exec.stdout.trim(), exec.stderr).toBe("whoami");
      // Its DNS names the same API server.
      const resolved = await inTenantPod(initech, "whoami", "nslookup kubernetes.default.svc.cluster.local");
      expect(resolved).toContain(apiIp);
    });

    it("holds the tenant to its quota at admission: its API server in a pod calls Ring0's webhook", async () => {
      const hard = { pods: "2" };
      await setTenantQuota(conn, initech, hard);
      await eventually(async () => {
        const found = await tenantSource?.find(initech);
        return found && "resource" in found && found.resource?.spec.quota?.hard?.pods === "2"
          ? true
          : undefined;
      }, 15_000);
      const admin = world?.admin[initech] as ClusterConnection;
      expect(await syncQuotaWebhook(admin, { hard }, { inPods: true })).toBe("applied");
      const run = (name: string) => tenantKubectl(initech, sleeperArgs(name, KUBECTL_IMAGE));
      try {
        // whoami is the first; a second fits once the webhook's ledger has seen the first.
        await eventually(async () => ((await run("second")).code === 0 ? true : undefined), 30_000);
        const third = await run("third");
        expect(third.code).not.toBe(0);
        expect(third.stderr).toContain('admission webhook "quota.ring0.dev" denied the request');
        expect(third.stderr).toContain("pods");
      } finally {
        await tenantKubectl(initech, ["delete", "pod", "second", "--wait=false"]);
        await setTenantQuota(conn, initech, null);
        expect(await syncQuotaWebhook(admin, undefined, { inPods: true })).toBe("removed");
      }
    });

    it("asks Ring0's authorization webhook about what RBAC refused: a tenant admin's new CRD is theirs at once, never a member's", async () => {
      const admin = world?.admin[initech] as ClusterConnection;
      const tenantAdmin = impersonating(kubeUserName(initech, "mallory"), roleGroup(initech, "admin"));
      const member = impersonating(kubeUserName(initech, "bob"), roleGroup(initech, "member"));
      // The API server runs with the webhook (its kubeconfig in the kubelet-client Secret).
      const apiserver = (await controlPlanePods(initech)).find(
        (pod) => pod.metadata.labels?.["app.kubernetes.io/name"] === "kube-apiserver",
      );
      expect(JSON.stringify(apiserver?.spec)).toContain("--authorization-mode=Node,RBAC,Webhook");
      const group = `fresh-${Date.now().toString(36)}.example.com`;
      const created = await kubeRequestText(admin, {
        method: "POST",
        path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        headers: tenantAdmin,
        body: gadgetCrd(group),
      });
      expect(created.status, created.text).toBe(201);
      const gadgets = `/apis/${group}/v1/namespaces/default/gadgets`;
      // No reconcile runs in this world: only Ring0's webhook, called from the pod, can allow this.
      const first = await eventually(async () => {
        const attempt = await kubeRequestText(admin, {
          method: "POST",
          path: gadgets,
          headers: tenantAdmin,
          body: gadget(group, "g1"),
        });
        return attempt.status === 404 ? undefined : attempt;
      }, 30_000);
      expect(first.status, first.text).toBe(201);
      const byMember = await kubeRequestText(admin, {
        method: "POST",
        path: gadgets,
        headers: member,
        body: gadget(group, "g2"),
      });
      expect(byMember.status).toBe(403);
    });

    it("calls the tenant's own webhook, served by its pod, at the Service's endpoint; never another tenant's pod", async () => {
      const { caBundle, ...tls } = await hookTls();
      const apply = async (tenant: string, objects: object[]) => {
        const file = path.join(home, `apply-${tenant}-${objects.length}.json`);
        fs.writeFileSync(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));
        const applied = await tenantKubectl(tenant, ["apply", "-f", file]);
        expect(applied.code, applied.stderr).toBe(0);
      };
      /** Creates a ConfigMap under webhook `name`: "created", or the refusal's message. */
      const configMapUnder = async (name: string, labels: Record<string, string> = {}) => {
        const file = path.join(home, `cm-${name}.json`);
        fs.writeFileSync(file, JSON.stringify(webhookConfigMap(name, labels)));
        const created = await tenantKubectl(initech, ["create", "-f", file]);
        return created.code === 0 ? "created" : created.stderr.trim();
      };
      const hookIps: Record<string, string> = {};
      for (const tenant of [initech, hooli]) {
        await apply(tenant, hookObjects(tls));
      }
      for (const tenant of [initech, hooli]) {
        hookIps[tenant] = await eventually(async () => {
          const got = await tenantKubectl(tenant, [
            "get",
            "pod",
            "hook",
            "-o",
            "jsonpath={.status.phase} {.status.podIP}",
          ]);
          const [phase, ip] = got.stdout.split(" ");
          return phase === "Running" && ip ? ip : undefined;
        }, 120_000);
      }
      try {
        await apply(initech, [
          configMapWebhook("hook", {
            service: { namespace: "default", name: "hook", path: "/admit" },
            caBundle,
          }),
        ]);
        const refused = await eventually(async () => {
          const answer = await configMapUnder("hook", { deny: "true" });
          return answer.includes("denied by the webhook in pod hook") ? answer : undefined;
        }, 60_000);
        expect(refused).toContain("admission webhook");
        expect(await configMapUnder("hook")).toBe("created");
        // The same webhook by URL at hooli's pod: initech's API server cannot even open a connection
        // (a connection would end in a certificate error: that pod's certificate names no address).
        await apply(initech, [
          configMapWebhook("other", { url: `https://${hookIps[hooli]}:8443/admit`, caBundle }),
        ]);
        const other = await eventually(async () => {
          const answer = await configMapUnder("other");
          return answer.includes("failed calling webhook") ? answer : undefined;
        }, 30_000);
        expect(other).toMatch(/context deadline exceeded|i\/o timeout/);
        expect(other).not.toMatch(/x509|certificate|connection refused/);
      } finally {
        for (const hook of ["hook", "other"])
          await tenantKubectl(initech, [
            "delete",
            "validatingwebhookconfiguration",
            hook,
            "--ignore-not-found",
          ]);
        for (const tenant of [initech, hooli])
          await tenantKubectl(tenant, ["delete", "pod,service", "hook", "--wait=false"]);
      }
    });

    it("walls a tenant's pods off from its etcd and controller manager, and from another tenant's control plane", async () => {
      /** Each `ip:port` dialled from the tenant's pod at once (3 s each at most): which opened. */
      const dial = async (tenant: string, targets: string[]) => {
        const script = targets
          .map((target) => {
            const [ip, port] = target.split(":");
            return `(nc -w 3 ${ip} ${port} </dev/null >/dev/null 2>&1 && echo "${target} OPEN" || echo "${target} SHUT") &`;
          })
          .join(" ");
        const out = await inTenantPod(tenant, "whoami", `${script} wait`);
        return Object.fromEntries(
          targets.map((target) => [
            target,
            out.includes(`${target} OPEN`) ? "OPEN" : out.includes(`${target} SHUT`) ? "SHUT" : "?",
          ]),
        );
      };
      const ownApi = `${await serviceIp(initech, "kube-apiserver")}:6443`;
      const etcdService = `${await serviceIp(initech, "etcd-client")}:2379`;
      const pods = (await controlPlanePods(initech)).map((pod) => ({
        ip: pod.status?.podIP as string,
        component: pod.metadata.labels?.["app.kubernetes.io/name"],
      }));
      const others = pods.flatMap((pod) =>
        pod.component === "kube-apiserver" ? [] : [`${pod.ip}:2379`, `${pod.ip}:10257`],
      );
      // Its own API server, and nothing else of its control plane.
      expect(await dial(initech, [ownApi, etcdService, ...others])).toEqual({
        [ownApi]: "OPEN",
        [etcdService]: "SHUT",
        ...Object.fromEntries(others.map((target) => [target, "SHUT"])),
      });
      // Another tenant's pod reaches nothing of it, by Service or pod address.
      const everything = [
        ownApi,
        etcdService,
        ...pods.flatMap((pod) => [2379, 6443, 10257].map((port) => `${pod.ip}:${port}`)),
      ];
      expect(await dial(hooli, everything)).toEqual(
        Object.fromEntries(everything.map((target) => [target, "SHUT"])),
      );
      // While its own API server is open to it.
      expect(await dial(hooli, [`${await serviceIp(hooli, "kube-apiserver")}:6443`])).toEqual({
        [`${await serviceIp(hooli, "kube-apiserver")}:6443`]: "OPEN",
      });
    });

    it("a tenant's pod on the pod API address gets no TLS session from the vn-agents or Ring0's webhooks", async () => {
      const agentPort = [...(world?.agents.endpoints().values() ?? [])][0]?.port;
      const webhookPort = admission?.port;
      expect(agentPort).toBeDefined();
      expect(webhookPort).toBeDefined();
      // Its own service-account token is no client certificate: the handshake is refused.
      for (const [port, path] of [
        [agentPort, `/containerLogs/default/whoami/whoami`],
        [webhookPort, "/validate/quota"],
      ] as const) {
        const out = await inTenantPod(
          hooli,
          "whoami",
          `kubectl --server=https://${POD_API_ADDRESS}:${port} --insecure-skip-tls-verify get --raw ${path} 2>&1; echo EXIT=$?`,
        );
        expect(out).not.toContain("EXIT=0");
        expect(out).not.toContain("whoami-started");
      }
    });

    it("suspends with etcd scaled to 0, its volume kept, and resumes with the same data", async () => {
      const provisioner = world?.provisioner;
      if (!provisioner) throw new Error("no world");
      const { gitVersion } = await kubeRequest<{ gitVersion: string }>(conn, { path: "/version" });
      const version = gitVersion.replace(/^v/, "").replace(/[-+].*$/, "");
      await provisioner.ensure({ tenant: initech, version, suspended: true });
      await eventually(async () => {
        const observed = await provisioner.observe(initech);
        return observed.phase === "Stopped" && (await controlPlanePods(initech)).length === 0
          ? true
          : undefined;
      }, 120_000);
      await provisioner.ensure({ tenant: initech, version, suspended: false });
      await eventually(
        async () => ((await provisioner.observe(initech)).phase === "Running" ? true : undefined),
        180_000,
      );
      const kept = await eventually(async () => {
        const got = await tenantKubectl(initech, [
          "get",
          "configmap",
          "kept",
          "-o",
          "jsonpath={.data.answer}",
        ]);
        return got.code === 0 ? got.stdout : undefined;
      }, 60_000);
      expect(kept).toBe("42");
    });

    it("deletes everything of the control plane: its namespace, claim and volume", async () => {
      const volumeName = (
        await readObject<KubeObject & { spec: { volumeName: string } }>(conn, {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: "data-etcd-0", namespace: cpNamespace(hooli) },
        })
      ).spec.volumeName;
      await world?.provisioner.destroy(hooli);
      await eventually(async () => {
        try {
          await readObject(conn, {
            apiVersion: "v1",
            kind: "PersistentVolume",
            metadata: { name: volumeName },
          });
          return undefined;
        } catch (error) {
          return isNotFound(error) ? true : undefined;
        }
      }, 120_000);
      expect(await world?.provisioner.observe(hooli)).toEqual({ phase: "Absent" });
      expect(fs.existsSync(path.join(realNodesDir(stateDir), plan.name, "volumes", volumeName))).toBe(false);
    });
  },
);
