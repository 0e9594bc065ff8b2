/**
 * One vn-agent beside one node's kubelet: what the chart's DaemonSet runs in every node's pod, from
 * Ring0's image (`node --import tsx server/vn-agent/node-agent.ts`), for Ring0 in a cluster. Tenant
 * API servers in pods reach it at its pod address (their vNodes point there: ./node-agents.ts); it
 * admits only their client certificates, checks each request's pod is that tenant's and on this
 * node (./agent.ts, the same agent Ring0 runs in-process on one machine), and relays it to this
 * node's kubelet at the pod's host address, authenticated with its service account's token
 * (the kubelet asks the API server: TokenReview, then nodes/proxy through SubjectAccessReview).
 * It serves with the certificate Ring0 issues for its pod address in the Secret
 * ring0-vn-agent-serving, waits for it at start, and takes a renewed one without a restart. It
 * holds no CA key. Configured by the environment only (the chart sets it):
 *   NODE_NAME            the node it runs on (downward API spec.nodeName; required)
 *   POD_IP, HOST_IP      its pod's and its node's address (downward API status.podIP, status.hostIP; required)
 *   RING0_NAMESPACE      Ring0's namespace (default: its service account's)
 *   VN_AGENT_PORT        the port it serves on (default 10550)
 *   VN_AGENT_KUBELET_CA  the CA of the kubelets' serving certificates (default: the cluster's CA)
 */

import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import { z } from "zod";
import { type KubeObject, readObject } from "@/server/k8s/apply";
import { connectCluster } from "@/server/k8s/cluster";
import type { V1Node } from "@/server/k8s/kinds/node";
import { NodeKind } from "@/server/k8s/kinds/node";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { superNamespace } from "@/server/syncer/naming";
import { besideKubelet, startVnAgent } from "./agent";
import { NODE_AGENT_SERVING_SECRET, nodeAgentTls } from "./node-agents";

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
const ip = z.union([z.ipv4(), z.ipv6()], { error: "expected an IP address" });

const settings = z.object({
  NODE_NAME: z
    .string({ error: "required: the node's name (downward API spec.nodeName)" })
    .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, "expected a node name"),
  POD_IP: ip,
  HOST_IP: ip,
  RING0_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "expected a namespace name")
    .optional(),
  VN_AGENT_PORT: z.coerce.number().int().min(1).max(65535).default(10550),
  VN_AGENT_KUBELET_CA: z.string().min(1).default(`${SERVICE_ACCOUNT_DIR}/ca.crt`),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
});

type Tls = { cert: string; key: string; clientCa: string };

async function main(): Promise<void> {
  const parsed = settings.safeParse(process.env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues)
      process.stderr.write(`ring0-vn-agent: ${issue.path.join(".")}: ${issue.message}\n`);
    process.exit(2);
  }
  const config = parsed.data;
  const logger = createLogger({ service: "ring0-vn-agent", node: config.NODE_NAME }, config.LOG_LEVEL);
  const namespace =
    config.RING0_NAMESPACE ?? fs.readFileSync(`${SERVICE_ACCOUNT_DIR}/namespace`, "utf8").trim();
  const kubeletCa = fs.readFileSync(config.VN_AGENT_KUBELET_CA, "utf8");
  const superCluster = connectCluster("super", { inCluster: true });

  /** This node's certificate and the callers' CA, when Ring0 has issued one for this pod's address. */
  const readTls = async (): Promise<Tls | undefined> => {
    const secret = await readObject<KubeObject & { data?: Record<string, string> }>(superCluster, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: NODE_AGENT_SERVING_SECRET, namespace },
    }).catch(() => undefined);
    const tls = nodeAgentTls(secret?.data, config.NODE_NAME);
    if (!tls) return undefined;
    try {
      return new X509Certificate(tls.cert).checkIP(config.POD_IP) ? tls : undefined;
    } catch {
      return undefined;
    }
  };
  let tls = await readTls();
  if (!tls) logger.info("waiting for Ring0 to issue this agent's serving certificate", { ip: config.POD_IP });
  while (!tls) {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    tls = await readTls();
  }

  let node: V1Node | undefined;
  const readNode = async () => {
    try {
      node = await kubeRequest<V1Node>(superCluster, {
        path: NodeKind.path({ name: config.NODE_NAME }),
        timeoutMs: 10_000,
      });
    } catch (error) {
      logger.warn("reading this node failed", { error });
    }
  };
  await readNode();

  const agent = await startVnAgent({
    node: config.NODE_NAME,
    currentNode: () => node,
    superCluster,
    superNamespace,
    tls,
    kubeletTls: {
      ca: kubeletCa,
      // A projected service-account token is rotated on disk: read per request.
      token: () => fs.readFileSync(`${SERVICE_ACCOUNT_DIR}/token`, "utf8").trim(),
    },
    kubeletAddress: (current) => besideKubelet(current, config.HOST_IP),
    logger,
    port: config.VN_AGENT_PORT,
    alsoOn: [config.POD_IP],
  });
  const nodeTimer = setInterval(() => void readNode(), 15_000);
  // A certificate Ring0 renewed is what new connections get, without a restart.
  const tlsTimer = setInterval(() => {
    void readTls().then((next) => {
      if (!next || (next.cert === tls?.cert && next.clientCa === tls?.clientCa)) return;
      tls = next;
      agent.reloadTls(next);
      logger.info("serving certificate renewed");
    });
  }, 60_000);

  const stop = () => {
    clearInterval(nodeTimer);
    clearInterval(tlsTimer);
    void agent.close().finally(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`ring0-vn-agent: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
