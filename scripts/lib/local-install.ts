/**
 * Ring0 installed by its chart into the local world (the super cluster with a real node): what
 * `./ring0 install` does, and what the in-cluster suite does the same way.
 *   - the node's part (nodeDuties): what a real cluster's nodes and network do for Ring0's pods and
 *     tenants' pods, which the local world's host plays: the tenant wall, volumes for the
 *     `ring0-local` class, the super cluster's API for Ring0's own pods, and 127.0.0.1 ports that
 *     lead to Ring0's Service (what browsers and kubectl on this host open);
 *   - a PostgreSQL and Ring0's IAM as pods (dependency), then `helm upgrade --install` with the
 *     values a trial needs (chartValues).
 */
import net from "node:net";
import { run } from "@/server/cluster/process";
import { startSuperApiProxy } from "@/server/cluster/real-node/super-api-proxy";
import { startTenantWall } from "@/server/cluster/real-node/tenant-wall";
import { startLocalVolumes } from "@/server/cluster/real-node/volumes";
import { type KubeObject, readObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import { POSTGRES_PORT } from "./postgres-image";

export { inClusterDir } from "@/server/cluster/real-node/plan";

import { POD_NETWORK } from "@/server/cluster/real-node/plan";

export const RING0_NAMESPACE = "ring0-system";
export const RING0_RELEASE = "ring0";
/** The chart's server pods (its vn-agents: NODE_AGENT_SELECTOR, server/vn-agent/node-agents.ts). */
export const SERVER_SELECTOR = "app.kubernetes.io/name=ring0,app.kubernetes.io/component=server";

/** What these helpers read of a pod. */
export interface Ring0Pod {
  metadata: { name: string; deletionTimestamp?: string | Date };
  status?: { phase?: string; containerStatuses?: { ready: boolean; restartCount: number }[] };
}

/** The pods of Ring0's namespace a label selector picks, but those being deleted. */
export async function livePods<T extends Ring0Pod>(conn: ClusterConnection, selector: string): Promise<T[]> {
  const pods = await kubeRequest<{ items: T[] }>(conn, {
    path: `/api/v1/namespaces/${RING0_NAMESPACE}/pods`,
    query: { labelSelector: selector },
  });
  return pods.items.filter((pod) => !pod.metadata.deletionTimestamp);
}

/** Running with every container ready. */
export function isReady(pod: Ring0Pod): boolean {
  return (
    pod.status?.phase === "Running" && (pod.status.containerStatuses ?? []).every((status) => status.ready)
  );
}

/** A nonroot pod's security context, and its container's walls (read-only root, no capabilities). */
export const nonroot = {
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  fsGroup: 65532,
  seccompProfile: { type: "RuntimeDefault" },
};
export const walled = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
};

export async function serviceIp(
  conn: ClusterConnection,
  name: string,
  namespace = RING0_NAMESPACE,
): Promise<string> {
  return (
    await readObject<KubeObject & { spec: { clusterIP: string } }>(conn, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
    })
  ).spec.clusterIP;
}

/**
 * A Deployment of one walled, nonroot pod behind a Service of its own name (a PostgreSQL, an IdP).
 * The Service comes first: `env` may name its URL (an IdP's issuer). Resolves with that URL.
 */
export async function dependency(
  conn: ClusterConnection,
  options: {
    name: string;
    image: string;
    port: number;
    env: { name: string; value: string }[] | ((url: string) => { name: string; value: string }[]);
    command?: string[];
    volumes: { name: string; mountPath: string }[];
    namespace?: string;
  },
): Promise<{ url: string }> {
  const namespace = options.namespace ?? RING0_NAMESPACE;
  const labels = { "app.kubernetes.io/name": options.name };
  await serverSideApply(conn, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: options.name, namespace },
    spec: { selector: labels, ports: [{ port: options.port, targetPort: options.port }] },
  });
  const url = `http://${await serviceIp(conn, options.name, namespace)}:${options.port}`;
  await serverSideApply(conn, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: options.name, namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: nonroot,
          containers: [
            {
              name: options.name,
              image: options.image,
              ...(options.command ? { command: options.command } : {}),
              env: typeof options.env === "function" ? options.env(url) : options.env,
              ports: [{ containerPort: options.port }],
              readinessProbe: { tcpSocket: { port: options.port }, periodSeconds: 2 },
              securityContext: walled,
              volumeMounts: options.volumes.map((volume) => ({
                name: volume.name,
                mountPath: volume.mountPath,
              })),
            },
          ],
          volumes: options.volumes.map((volume) => ({ name: volume.name, emptyDir: {} })),
        },
      },
    },
  });
  return { url };
}

/**
 * A trial's PostgreSQL and IdP as pods in Ring0's namespace: the PostgreSQL image with Ring0's
 * role's password, and Ring0's IAM on its own from Ring0's image (its demo accounts, its one client
 * redirecting to `publicUrl`). Resolves with Ring0's database URL and the IAM's issuer.
 */
export async function trialDependencies(
  conn: ClusterConnection,
  options: {
    postgresImage: string;
    ring0Image: string;
    databasePassword: string;
    clientSecret: string;
    publicUrl: string;
  },
): Promise<{ databaseUrl: string; issuer: string }> {
  await serverSideApply(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: RING0_NAMESPACE } });
  const postgres = await dependency(conn, {
    name: "ring0-postgres",
    image: options.postgresImage,
    port: POSTGRES_PORT,
    env: [{ name: "POSTGRES_PASSWORD", value: options.databasePassword }],
    volumes: [
      { name: "data", mountPath: "/var/lib/postgresql/data" },
      { name: "tmp", mountPath: "/tmp" },
    ],
  });
  const iam = await dependency(conn, {
    name: "ring0-iam",
    image: options.ring0Image,
    port: 3001,
    command: ["/usr/local/bin/node", "--import", "tsx", "server/iam/serve.ts"],
    env: (issuer) => [
      { name: "IAM_ISSUER", value: issuer },
      { name: "IAM_LISTEN_ADDRESS", value: "0.0.0.0" },
      { name: "IAM_STATE_DIR", value: "/var/lib/ring0-iam/state" },
      { name: "IAM_CLIENT_ID", value: "ring0" },
      // The demo accounts, beyond loopback: a trial's IdP, said so.
      { name: "IAM_ALLOW_DEMO_ACCOUNTS", value: "true" },
      { name: "IAM_CLIENT_SECRET", value: options.clientSecret },
      { name: "IAM_REDIRECT_URIS", value: `${options.publicUrl}/api/auth/callback/ring0-iam` },
    ],
    volumes: [
      { name: "state", mountPath: "/var/lib/ring0-iam" },
      { name: "tmp", mountPath: "/tmp" },
    ],
  });
  const host = new URL(postgres.url).host;
  return {
    databaseUrl: `postgresql://ring0:${options.databasePassword}@${host}/ring0`,
    issuer: iam.url,
  };
}

/**
 * The chart's values for a trial on this machine (`helm install` arguments): Ring0's image from
 * the world's registry, its URLs on this host, the PostgreSQL and IdP pods, etcd on `ring0-local`
 * volumes, the vn-agents verifying the real node's kubelet with the world's kubelet CA, and
 * requests small enough for two replicas on the one real node (the chart only prefers spreading).
 */
export function trialValues(options: {
  image: string;
  tag: string;
  publicUrl: string;
  gatewayUrl: string;
  databaseUrl: string;
  issuer: string;
  clientSecret: string;
  kubeletCaFile: string;
}): string[] {
  const values: [string, string][] = [
    ["image.repository", options.image],
    ["image.tag", options.tag],
    ["publicUrl", options.publicUrl],
    ["gatewayUrl", options.gatewayUrl],
    ["database.url", options.databaseUrl],
    ["oidc.issuer", options.issuer],
    ["oidc.clientId", "ring0"],
    ["oidc.clientSecret", options.clientSecret],
    ["controlPlanes.etcdStorage.storageClassName", "ring0-local"],
    ["controlPlanes.etcdStorage.size", "1Gi"],
    ["resources.requests.cpu", "100m"],
    ["resources.requests.memory", "256Mi"],
    // This host's pod range (its nodes' podCIDRs may be unset): no tenant ipBlock admits it.
    ["tenantNetwork.podCidrs", `{${POD_NETWORK}}`],
  ];
  return [
    ...values.flatMap(([key, value]) => ["--set", `${key}=${value}`]),
    "--set-file",
    `vnAgent.kubeletCa=${options.kubeletCaFile}`,
  ];
}

/** Whether the node's kube-proxy has a rule for this cluster IP (iptables mode, its KUBE-SERVICES chain). */
export async function programmed(ip: string): Promise<boolean> {
  const rules = await run("iptables", ["-w", "5", "-t", "nat", "-S", "KUBE-SERVICES"], {
    timeoutMs: 30_000,
  }).then(
    (result) => result.stdout,
    () => "",
  );
  return rules.includes(`-d ${ip}/32`);
}

/**
 * Serves 127.0.0.1:<port> (0: a free one) from a Service's `servicePort`: what a browser or kubectl
 * on this host opens as Ring0's public URL or the gateway's. Resolves with the server.
 */
export async function forwardToService(
  conn: ClusterConnection,
  service: string,
  servicePort: number,
  port = 0,
): Promise<net.Server> {
  const server = net.createServer((socket) => {
    socket.on("error", () => socket.destroy());
    void serviceIp(conn, service).then(
      async (ip) => {
        // Only once the node's kube-proxy serves that cluster IP: before, the connection would
        // end in the host's sink (or, without it, follow the default route out of the machine).
        if (!(await programmed(ip))) return void socket.destroy();
        const upstream = net.connect(servicePort, ip);
        socket.pipe(upstream).pipe(socket);
        upstream.on("error", () => socket.destroy());
        socket.on("close", () => upstream.destroy());
      },
      () => socket.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

export interface NodeDuties {
  refusedFrom(ip: string): number;
  stop(): Promise<void>;
}

/** The local world's node playing a cluster's part for Ring0 in it (see the file's comment). */
export async function startNodeDuties(options: {
  conn: ClusterConnection;
  stateDir: string;
  logger: Logger;
  /** Tenants whose pods the wall lets reach another's ([from, to]; RING0_TENANT_TRAFFIC_ALLOW's). */
  allowances?: [string, string][];
}): Promise<NodeDuties> {
  const { conn, stateDir, logger } = options;
  const wall = await startTenantWall({
    superCluster: conn,
    logger,
    ...(options.allowances ? { allowances: options.allowances } : {}),
  });
  const volumes = startLocalVolumes({ superCluster: conn, stateDir, logger });
  const proxy = await startSuperApiProxy({
    superCluster: conn,
    apiserverPort: Number(new URL(conn.server).port),
    logger,
  });
  return {
    refusedFrom: (ip) => proxy.refusedFrom(ip),
    async stop() {
      await proxy.close();
      volumes.stop();
      wall.stop();
    },
  };
}
