/**
 * Issue 14's "done when", as a hostile tenant member meets the running product: acme-member signs
 * in, downloads a kubeconfig from the portal, runs a pod and execs into it; from there they try
 * every port this host listens on (every etcd, every API server, globex's control plane, Ring0's
 * PostgreSQL, IAM, gateway, webhook, vn-agents) and nothing answers. From this host, without
 * credentials, nothing of Ring0's answers either.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import {
  hostListeners,
  httpsGet,
  plainHttp,
  probeScript,
  simKubeletPort,
  superClusterPorts,
  tcpOpen,
  tenantClusterPorts,
  tlsWithoutClientCertificate,
} from "@/test/walls";
import { expect, test } from "./fixtures";
import { kubectlThroughPortal, provisioning } from "./kubectl";
import { e2ePort, e2eStateDir } from "./ports";

const pod = `attacker-${Math.random().toString(36).slice(2, 7)}`;

test.describe("the walls, as a hostile tenant member meets them", () => {
  test.setTimeout(360_000);

  test("acme-member's exec into an acme pod reaches nothing on this host, and nothing answers there without credentials", async ({
    loginAs,
  }) => {
    const page = await loginAs("tenant-member", "acme");
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-walls-"));
    let kubectl: ((args: string[], input?: string) => string) | null = null;
    try {
      kubectl = await kubectlThroughPortal(page, work);
      kubectl(["run", pod, "-n", "default", "--image=busybox", "--restart=Never"]);
      const run = kubectl;
      await expect
        .poll(() => run(["get", "pod", pod, "-n", "default", "-o", "jsonpath={.status.phase}"]), provisioning)
        .toBe("Running");

      const exec = (script: string) => run(["exec", pod, "-n", "default", "--", "sh", "-c", script]);
      expect(exec("id -un; ls /").trim().split("\n")).toEqual([
        "nobody",
        "bin",
        "dev",
        "etc",
        "home",
        "proc",
        "tmp",
        "usr",
      ]);

      const globex = tenantClusterPorts(e2eStateDir, "globex");
      const acme = tenantClusterPorts(e2eStateDir, "acme");
      const superCluster = superClusterPorts(e2eStateDir);
      const ring0 = {
        portal: e2ePort,
        iam: e2ePort + 1,
        postgres: e2ePort + 10,
        gateway: e2ePort + 443,
        webhook: (
          JSON.parse(fs.readFileSync(path.join(e2eStateDir, "webhook-port.json"), "utf8")) as {
            ports: { webhooks: number };
          }
        ).ports.webhooks,
        simKubelet: simKubeletPort(e2eStateDir),
      };
      const listening = hostListeners();
      const targets = [
        ...Object.values(ring0),
        superCluster.etcdClient,
        superCluster.apiserver,
        acme.etcdClient,
        globex.etcdClient,
        globex.etcdPeer,
        globex.apiserver,
        globex.controllerManager,
      ];
      for (const port of targets) {
        expect(listening, `port ${port} listens on this host`).toContain(port);
        expect(await tcpOpen(port)).toBe(true);
      }
      const probed = exec(probeScript(listening));
      expect(probed).toContain(`probed ${listening.length}`);
      expect(probed.split("\n").filter((line) => line.startsWith("open "))).toEqual([]);

      // From this host, without credentials: every etcd wants a client certificate of its own CA,
      // every API server authenticates no anonymous request beyond health, Ring0's services want
      // their credentials.
      for (const port of [superCluster.etcdClient, acme.etcdClient, globex.etcdClient, globex.etcdPeer]) {
        expect((await plainHttp(port, "/v3/kv/range")).connected).toBe(false);
        expect(await tlsWithoutClientCertificate(port)).toBe(false);
      }
      for (const port of [superCluster.apiserver, acme.apiserver, globex.apiserver]) {
        expect(await httpsGet(port, "/api/v1/namespaces/kube-system/secrets")).toMatchObject({ status: 401 });
      }
      for (const port of [ring0.simKubelet, ring0.webhook])
        expect(await tlsWithoutClientCertificate(port)).toBe(false);
      expect(await httpsGet(ring0.gateway, "/k8s/tenants/globex/api/v1/secrets")).toMatchObject({
        status: 401,
      });
      const database = new pg.Client({
        host: "127.0.0.1",
        port: ring0.postgres,
        user: "postgres",
        password: "guess",
        database: "postgres",
        connectionTimeoutMillis: 5_000,
      });
      await expect(database.connect()).rejects.toThrow(/password authentication failed/);
      await database.end().catch(() => undefined);
    } finally {
      try {
        kubectl?.(["delete", "pod", pod, "-n", "default", "--wait=false"]);
      } catch {
        // Best effort: the pod goes with the run's state dir anyway.
      }
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
