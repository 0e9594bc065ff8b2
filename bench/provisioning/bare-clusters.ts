/**
 * The provisioning benchmark's baseline: bare `kwokctl create cluster` with the same binaries and
 * components (etcd, kube-apiserver, kube-controller-manager), reached with its admin kubeconfig.
 */
import fs from "node:fs";
import path from "node:path";
import { runKwokctl } from "@/server/cluster/kwokctl";
import { renderKwokctlConfig } from "@/server/cluster/kwokctl-config";
import { freePortsFor } from "@/server/cluster/ports";
import { controlPlaneCreateArgs } from "@/server/provisioners/local";
import { httpsRequest, kubectl } from "../lib/clients";
import { logger, reapLeftovers } from "../lib/run";
import { readPem, type Subject, TIMEOUT_MS } from "./subjects";

const PORT_OPTIONS = ["kubeApiserverPort", "etcdPort", "etcdPeerPort", "kubeControllerManagerPort"] as const;

/** A bare cluster `name` under `root/bare/`, ready to be created. */
export async function bareCluster(
  root: string,
  binDir: string,
  kubectlBinary: string,
  name: string,
): Promise<Subject> {
  const workDir = path.join(root, "bare", name);
  fs.mkdirSync(workDir, { recursive: true });
  const ports = await freePortsFor(PORT_OPTIONS);
  const configPath = path.join(workDir, "kwok.yaml");
  fs.writeFileSync(
    configPath,
    renderKwokctlConfig({ workDir, binDir, writer: "bench/provisioning.ts", ports }),
  );
  const cluster = { workDir, name, configPath };
  const kubeconfig = path.join(workDir, "kubeconfig");
  const pki = path.join(workDir, "clusters", name, "pki");
  const server = `https://127.0.0.1:${ports.kubeApiserverPort}`;
  return {
    name,
    create: async () => {
      await runKwokctl(cluster, binDir, controlPlaneCreateArgs(kubeconfig), {
        timeoutMs: TIMEOUT_MS,
        logger,
      });
    },
    probe: async () => {
      const ca = readPem(path.join(pki, "ca.crt"));
      const cert = readPem(path.join(pki, "admin.crt"));
      const key = readPem(path.join(pki, "admin.key"));
      if (!ca || !cert || !key) return false;
      return (await httpsRequest(`${server}/api/v1/namespaces`, { ca, cert, key })).status === 200;
    },
    kubectlGetNs: async () =>
      (await kubectl(kubectlBinary, kubeconfig, path.join(workDir, "kubectl", "cache"), ["get", "ns"]))
        .code === 0,
    pidDir: path.join(workDir, "clusters", name, "pids"),
    restart: async () => {
      await runKwokctl(cluster, binDir, ["start", "cluster", "--timeout", "2m"], {
        timeoutMs: TIMEOUT_MS,
        logger,
      });
    },
    remove: async () => {
      await runKwokctl(cluster, binDir, ["delete", "cluster"], { timeoutMs: 120_000, logger });
      await reapLeftovers(workDir);
      fs.rmSync(workDir, { recursive: true, force: true });
    },
  };
}
