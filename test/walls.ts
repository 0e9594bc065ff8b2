/**
 * What the wall-attacking suites share (test/abuse/walls.int.test.ts, e2e/walls.spec.ts): where the
 * local world's components listen, and an unauthenticated attacker's probes of them — from this
 * host, and from inside a tenant's pod.
 */
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import path from "node:path";
import tls from "node:tls";
import { componentFlagsOf } from "@/server/cluster/kwokctl-config";

/** The ports of one kwokctl cluster's components, from its saved config. */
export interface ClusterPorts {
  name: string;
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  controllerManager: number;
  /** Only the super cluster runs a scheduler. */
  scheduler?: number;
}

const portOf = (value: string | undefined) => Number(/:(\d+)$/.exec(value ?? "")?.[1] ?? value);

/** `clusters/<name>/kwok.yaml` under a kwokctl work dir → its components' ports. */
export function clusterPorts(name: string, savedConfig: string): ClusterPorts {
  const text = fs.readFileSync(savedConfig, "utf8");
  const etcd = componentFlagsOf(text, "etcd");
  const scheduler = componentFlagsOf(text, "kube-scheduler")?.get("secure-port");
  return {
    name,
    etcdClient: portOf(etcd?.get("listen-client-urls")),
    etcdPeer: portOf(etcd?.get("listen-peer-urls")),
    apiserver: Number(componentFlagsOf(text, "kube-apiserver")?.get("secure-port")),
    controllerManager: Number(componentFlagsOf(text, "kube-controller-manager")?.get("secure-port")),
    ...(scheduler ? { scheduler: Number(scheduler) } : {}),
  };
}

/** The local super cluster's ports, from its state dir. */
export function superClusterPorts(stateDir: string): ClusterPorts {
  return clusterPorts("super", path.join(stateDir, "kwok", "clusters", "ring0", "kwok.yaml"));
}

/** A local tenant control plane's ports, from the provisioner's state dir. */
export function tenantClusterPorts(stateDir: string, tenant: string): ClusterPorts {
  return clusterPorts(
    tenant,
    path.join(stateDir, "tenants", tenant, "clusters", `ring0-${tenant}`, "kwok.yaml"),
  );
}

/** ring0-simkubelet's port, from the super cluster's state dir. */
export function simKubeletPort(stateDir: string): number {
  return (
    JSON.parse(fs.readFileSync(path.join(stateDir, "kwok", "sim-kubelet.json"), "utf8")) as { port: number }
  ).port;
}

/** Every TCP port something listens on at loopback or any address on this host (IPv4 and IPv6). */
export function hostListeners(): number[] {
  const ports = new Set<number>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = fs.readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // state 0A is LISTEN; local address is HEX_IP:HEX_PORT
      if (fields[3] !== "0A" || !fields[1]) continue;
      ports.add(Number.parseInt(fields[1].split(":")[1] ?? "0", 16));
    }
  }
  return [...ports].filter((port) => port > 0).sort((a, b) => a - b);
}

/**
 * A shell script for inside a pod: tries every port on 127.0.0.1 (with busybox's nc) and prints
 * `open <port>` for each that accepted a connection, then `probed <n>`.
 */
export function probeScript(ports: number[]): string {
  return [
    "n=0",
    `for p in ${ports.join(" ")}; do`,
    "  n=$((n+1))",
    "  if nc -w 1 127.0.0.1 $p </dev/null >/dev/null 2>&1; then echo open $p; fi",
    "done",
    'echo "probed $n"',
  ].join("\n");
}

export type Outcome =
  | { connected: false; error: string }
  | { connected: true; status?: number; body: string };

/** A GET to 127.0.0.1:port: its status and body, or why no answer came. */
function get(
  transport: typeof http | typeof https,
  port: number,
  pathName: string,
  options: https.RequestOptions,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = transport.get(
      { host: "127.0.0.1", port, path: pathName, timeout: 5_000, agent: false, ...options },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => resolve({ connected: true, status: response.statusCode, body }));
      },
    );
    request.on("timeout", () => request.destroy(new Error("timeout")));
    request.on("error", (error) => resolve({ connected: false, error: error.message }));
  });
}

/** Plain HTTP to 127.0.0.1:port, as an attacker without TLS would try. */
export function plainHttp(port: number, pathName = "/"): Promise<Outcome> {
  return get(http, port, pathName, {});
}

/** HTTPS to 127.0.0.1:port without verifying the server, with or without a client certificate. */
export function httpsGet(
  port: number,
  pathName: string,
  client: { cert?: string; key?: string } = {},
): Promise<Outcome> {
  return get(https, port, pathName, {
    rejectUnauthorized: false,
    ...(client.cert ? { cert: client.cert, key: client.key } : {}),
  });
}

/** Whether a raw TCP connection to 127.0.0.1:port is accepted at all. */
export function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.setTimeout(2_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Whether a TLS handshake without a client certificate completes (a server that demands one ends it). */
export function tlsWithoutClientCertificate(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: "127.0.0.1",
      port,
      rejectUnauthorized: false,
      servername: "localhost",
    });
    socket.setTimeout(3_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("secureConnect", () => {
      // TLS 1.3 servers refuse the missing certificate after the handshake: a read tells.
      socket.write("GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    });
    let answered = false;
    socket.on("data", () => {
      answered = true;
    });
    socket.once("close", () => resolve(answered));
    socket.once("error", () => resolve(false));
  });
}
