/**
 * Cluster DNS for tenants' pods on real nodes (issue 18): one server on the host's pod API address
 * (POD_API_ADDRESS:53, UDP and TCP) that answers each pod as its own tenant's cluster would. The
 * asking pod is known by its source address (a synced pod of the super cluster, not host-networked,
 * not finished); names under `cluster.local` are looked up among that tenant's Services only:
 *   <service>.<namespace>.svc            A: the cluster IP (the copy's below, which kube-proxy serves,
 *                                        the tenant's own unless that was taken below);
 *                                        headless: its ready endpoints; ExternalName: a CNAME
 *   <hostname>.<service>.<namespace>.svc A: the endpoint of that hostname (StatefulSet pods)
 *   _<port>._<proto>.<service>.<ns>.svc  SRV
 *   kubernetes.default.svc               A: the pod API address (the tenant's own API server), or for
 *                                        a control plane the `kubernetes` provisioner runs in pods,
 *                                        its API server Service's cluster IP
 * The namespace is the tenant's: another tenant's Services, and the super namespaces' names, are
 * NXDOMAIN. `<service>.<namespace>[.svc]` is answered as the cluster's name too (resolvers that
 * apply no search path to a dotted name ask for it as it is). Other names outside the cluster domain
 * are REFUSED (this server resolves nothing beyond the host's pods), as is every address that is
 * not a tenant's pod. The syncer points ClusterFirst pods
 * at this server with their tenant namespace's search path (translate.ts).
 *
 * The walls: the host's firewall lets pods reach only sockets bound to exactly this address
 * (host-firewall.ts); answers come from the super cluster's own records, never from a pod's words.
 */
import dgram from "node:dgram";
import net from "node:net";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { Logger } from "@/server/logger";
import {
  APISERVER_NAME,
  controlPlaneNamespace,
  MANAGED_BY_LABEL,
  TENANT_LABEL,
} from "@/server/provisioners/kubernetes/naming";
import { syncAnnotations, syncLabels } from "@/server/syncer/contracts";
import { CLUSTER_DOMAIN } from "@/server/syncer/dns-config";
import { superNamespace } from "@/server/syncer/naming";
import type { Json } from "@/server/syncer/synced-kinds";
import { type CachedObject, createWatchCache, type WatchCache } from "@/server/syncer/watch-cache";
import { type Answer, encodeResponse, parseQuery, QTYPE, type Question, RCODE } from "./dns-wire";
import { podOwners } from "./tenant-wall";

const TTL = 5;

export interface DnsService {
  type: string;
  clusterIP?: string;
  externalName?: string;
  ports: { name?: string; protocol: string; port: number }[];
}

/** What the answers are made from, as the super cluster says (pure interface, for tests). */
export interface DnsView {
  /** The tenant's Service `name` in its namespace `namespace`, if it exists. */
  service(tenant: string, namespace: string, name: string): DnsService | undefined;
  /** The ready endpoints of that Service (headless ones are answered with them). */
  endpoints(tenant: string, namespace: string, name: string): { address: string; hostname?: string }[];
  /** Where the tenant's pods reach its API server, if they do. */
  podApi(tenant: string): string | undefined;
}

const label = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The answer to one question from a pod of `tenant` (pure). */
export function answerQuestion(
  question: { name: string; type: number },
  tenant: string,
  view: DnsView,
): { rcode: number; answers: Answer[] } {
  const suffix = `.${CLUSTER_DOMAIN}`;
  if (!question.name.endsWith(suffix)) {
    // `<service>.<namespace>` and `<service>.<namespace>.svc` as the cluster's names: resolvers
    // that apply no search path to a name with a dot (busybox's nslookup) ask for them as they are.
    const parts = question.name.split(".");
    const relative =
      parts.length === 2 ? `.svc${suffix}` : parts.length === 3 && parts[2] === "svc" ? suffix : undefined;
    const found = relative
      ? answerQuestion({ ...question, name: `${question.name}${relative}` }, tenant, view)
      : undefined;
    if (found?.rcode !== RCODE.noError) return { rcode: RCODE.refused, answers: [] };
    return {
      rcode: found.rcode,
      answers: found.answers.map((answer) => ({ ...answer, name: question.name })),
    };
  }
  const parts = question.name.slice(0, -suffix.length).split(".");
  const nx = { rcode: RCODE.nxDomain, answers: [] };
  if (parts.at(-1) !== "svc" || parts.length < 3 || parts.length > 5) return nx;
  const [namespace, service] = [parts.at(-2) as string, parts.at(-3) as string];
  if (!label.test(namespace) || !(label.test(service) || service === "kubernetes")) return nx;
  const name = question.name;
  const wants = (type: number) => question.type === type || question.type === QTYPE.ANY;
  const records = (answers: Answer[]) => ({
    rcode: RCODE.noError,
    answers: answers.filter((answer) => wants(QTYPE[answer.type])),
  });

  if (namespace === "default" && service === "kubernetes" && parts.length === 3) {
    const address = view.podApi(tenant);
    return address ? records([{ type: "A", name, address, ttl: TTL }]) : nx;
  }
  const found = view.service(tenant, namespace, service);
  if (!found) return nx;
  const target = `${service}.${namespace}.svc.${CLUSTER_DOMAIN}`;
  const headless = found.clusterIP === "None" || (!found.clusterIP && found.type !== "ExternalName");
  const ready = () => view.endpoints(tenant, namespace, service);

  if (parts.length === 5) {
    // _<port>._<proto>.<service>.<namespace>.svc
    const [port, proto] = [parts[0] as string, parts[1] as string];
    if (!port.startsWith("_") || !proto.startsWith("_")) return nx;
    const match = found.ports.find(
      (entry) => entry.name === port.slice(1) && entry.protocol.toLowerCase() === proto.slice(1),
    );
    if (!match) return nx;
    return records([{ type: "SRV", name, priority: 0, weight: 100, port: match.port, target, ttl: TTL }]);
  }
  if (parts.length === 4) {
    // <hostname>.<service>.<namespace>.svc: a headless service's named endpoint.
    const host = parts[0] as string;
    const endpoint = headless ? ready().find((entry) => entry.hostname === host) : undefined;
    return endpoint ? records([{ type: "A", name, address: endpoint.address, ttl: TTL }]) : nx;
  }
  if (found.type === "ExternalName") {
    return found.externalName ? records([{ type: "CNAME", name, target: found.externalName, ttl: TTL }]) : nx;
  }
  if (headless) return records(ready().map(({ address }) => ({ type: "A", name, address, ttl: TTL })));
  return records([{ type: "A", name, address: found.clusterIP as string, ttl: TTL }]);
}

type Obj = CachedObject & { spec?: Json; status?: Json };

export interface PodDns {
  close(): Promise<void>;
}

export interface PodDnsOptions {
  superCluster: ClusterConnection;
  logger: Logger;
  /** The address to serve on (POD_API_ADDRESS) and port (53). */
  host: string;
  port?: number;
  /** Where a tenant's pods reach its API server (the pod API address when the tenant has a listener). */
  podApi(tenant: string): string | undefined;
  /** How long to wait for the first lists (default 30 s). */
  listTimeoutMs?: number;
  /** Queries a second one pod may ask (default 200, bursts of twice that). */
  queriesPerSecond?: number;
}

/** The most records one answer carries (a headless Service's endpoints). */
const MAX_ANSWERS = 100;

/**
 * Serves the pods' DNS until closed. Resolves once the super cluster's pods, services and endpoint
 * slices are listed (an answer is never made from half a list) and the sockets are bound; throws
 * when they cannot be listed in time or the address cannot be bound.
 */
export async function startPodDns(options: PodDnsOptions): Promise<PodDns> {
  const log = options.logger.child({ component: "pod-dns" });
  const { superCluster } = options;
  const reportError = (what: string) => (error: { message: string }) =>
    log.debug(`watching ${what} failed`, { error: error.message });
  // Pod address → its tenant, and (namespace, service) → its slices: rebuilt when asked after a
  // change, never per query. An address two tenants' pods claim answers no one (podOwners).
  let owners: Map<string, string | null> | null = null;
  let slicesByService: Map<string, Obj[]> | null = null;
  const pods: WatchCache<Obj> = createWatchCache<Obj>(
    superCluster,
    { path: "/api/v1/pods", labelSelector: `${syncLabels.managed}=true` },
    () => {
      owners = null;
    },
    reportError("pods"),
  );
  const services: WatchCache<Obj> = createWatchCache<Obj>(
    superCluster,
    { path: "/api/v1/services", labelSelector: `${syncLabels.managed}=true` },
    () => {},
    reportError("services"),
  );
  const slices: WatchCache<Obj> = createWatchCache<Obj>(
    superCluster,
    { path: "/apis/discovery.k8s.io/v1/endpointslices" },
    () => {
      slicesByService = null;
    },
    reportError("endpoint slices"),
  );
  // The API server Services of control planes in pods (the kubernetes provisioner's), by tenant.
  const controlPlaneServices: WatchCache<Obj> = createWatchCache<Obj>(
    superCluster,
    { path: "/api/v1/services", labelSelector: `${MANAGED_BY_LABEL}=ring0,${TENANT_LABEL}` },
    () => {},
    reportError("control plane services"),
  );
  const caches = [pods, services, slices, controlPlaneServices];

  /** The cluster IP of `tenant`'s API server Service, when its control plane runs in pods. */
  const podsApi = (tenant: string): string | undefined => {
    const service = controlPlaneServices.get(controlPlaneNamespace(tenant), APISERVER_NAME);
    const labels = (service?.metadata.labels ?? {}) as Record<string, string>;
    const clusterIP = (service?.spec as { clusterIP?: string } | undefined)?.clusterIP;
    return labels[TENANT_LABEL] === tenant && clusterIP && clusterIP !== "None" ? clusterIP : undefined;
  };

  const serviceBelow = (tenant: string, namespace: string, name: string) => {
    const below = services.get(superNamespace(tenant, namespace), name);
    const labels = (below?.metadata.labels ?? {}) as Record<string, string>;
    const annotations = (below?.metadata.annotations ?? {}) as Record<string, string>;
    // The copy must be this tenant's, of that very tenant namespace.
    if (
      !below ||
      labels[syncLabels.tenant] !== tenant ||
      annotations[syncAnnotations.namespace] !== namespace
    )
      return undefined;
    return below;
  };
  const view: DnsView = {
    service(tenant, namespace, name) {
      const below = serviceBelow(tenant, namespace, name);
      if (!below) return undefined;
      const spec = (below.spec ?? {}) as {
        type?: string;
        clusterIP?: string;
        externalName?: string;
        ports?: { name?: string; protocol?: string; port: number }[];
      };
      return {
        type: spec.type ?? "ClusterIP",
        clusterIP: spec.clusterIP,
        externalName: spec.externalName,
        ports: (spec.ports ?? []).map((port) => ({ ...port, protocol: port.protocol ?? "TCP" })),
      };
    },
    endpoints(tenant, namespace, name) {
      if (!serviceBelow(tenant, namespace, name)) return [];
      if (!slicesByService) {
        slicesByService = new Map();
        for (const slice of slices.values()) {
          const service = ((slice.metadata.labels ?? {}) as Record<string, string>)[
            "kubernetes.io/service-name"
          ];
          if (!service) continue;
          const key = `${slice.metadata.namespace}/${service}`;
          slicesByService.set(key, [...(slicesByService.get(key) ?? []), slice]);
        }
      }
      const found: { address: string; hostname?: string }[] = [];
      for (const slice of slicesByService.get(`${superNamespace(tenant, namespace)}/${name}`) ?? []) {
        if ((slice as { addressType?: string }).addressType !== "IPv4") continue;
        const endpoints = (slice as { endpoints?: Json[] }).endpoints ?? [];
        for (const endpoint of endpoints) {
          const conditions = endpoint.conditions as { ready?: boolean } | undefined;
          if (conditions?.ready === false) continue;
          for (const address of (endpoint.addresses as string[] | undefined) ?? []) {
            found.push({ address, hostname: endpoint.hostname as string | undefined });
          }
        }
      }
      return found;
    },
    podApi: (tenant) => podsApi(tenant) ?? options.podApi(tenant),
  };

  /** Queries a second per source address (bursts of twice that); beyond them, no answer. */
  const rate = options.queriesPerSecond ?? 200;
  const buckets = new Map<string, { tokens: number; at: number }>();
  function allowed(source: string): boolean {
    const now = Date.now();
    const bucket = buckets.get(source) ?? { tokens: rate * 2, at: now };
    bucket.tokens = Math.min(rate * 2, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    bucket.at = now;
    buckets.set(source, bucket);
    if (buckets.size > 4096) buckets.clear();
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  function respond(message: Buffer, source: string, maxBytes: number): Buffer | null {
    const address = source.replace(/^::ffff:/, "");
    if (!allowed(address)) return null;
    const parsed = parseQuery(message);
    if (!("name" in parsed)) return parsed.id === undefined ? null : encodeResponse(parsed, parsed.rcode);
    const question: Question = parsed;
    owners ??= podOwners(pods.values());
    const tenant = owners.get(address);
    if (!tenant || question.class !== 1) return encodeResponse(question, RCODE.refused);
    const { rcode, answers } = answerQuestion(question, tenant, view);
    return encodeResponse(question, rcode, answers.slice(0, MAX_ANSWERS), maxBytes);
  }

  let timer: NodeJS.Timeout | undefined;
  const listed = await Promise.race([
    Promise.all(caches.map((cache) => cache.synced())).then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), options.listTimeoutMs ?? 30_000);
    }),
  ]);
  clearTimeout(timer);
  if (!listed) {
    for (const cache of caches) cache.stop();
    throw new Error("the super cluster's pods, services and endpoint slices could not be listed");
  }
  const port = options.port ?? 53;
  const udp = dgram.createSocket("udp4");
  udp.on("message", (message, remote) => {
    const reply = respond(message, remote.address, 512);
    if (reply) udp.send(reply, remote.port, remote.address);
  });
  udp.on("error", (error) => log.warn("the pods' DNS socket failed", { error: error.message }));
  const sockets = new Set<net.Socket>();
  const perSource = new Map<string, number>();
  const tcp = net.createServer((socket) => {
    const source = (socket.remoteAddress ?? "").replace(/^::ffff:/, "");
    const held = perSource.get(source) ?? 0;
    if (sockets.size >= 256 || held >= 4) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    perSource.set(source, held + 1);
    // Idle or not, a connection lasts 15 s at most: none can be held to crowd out others.
    socket.setTimeout(5_000, () => socket.destroy());
    const deadline = setTimeout(() => socket.destroy(), 15_000);
    socket.once("close", () => {
      clearTimeout(deadline);
      sockets.delete(socket);
      const left = (perSource.get(source) ?? 1) - 1;
      if (left > 0) perSource.set(source, left);
      else perSource.delete(source);
    });
    socket.on("error", () => socket.destroy());
    let pending = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (pending.length > 4096) return void socket.destroy();
      while (pending.length >= 2) {
        const size = pending.readUInt16BE(0);
        if (pending.length < 2 + size) break;
        const reply = respond(pending.subarray(2, 2 + size), socket.remoteAddress ?? "", 65_535);
        pending = pending.subarray(2 + size);
        if (!reply) return void socket.destroy();
        const length = Buffer.alloc(2);
        length.writeUInt16BE(reply.length);
        socket.write(Buffer.concat([length, reply]));
        // A client that asks and never reads: answers are not kept for it.
        if (socket.writableLength > 64 * 1024) return void socket.destroy();
      }
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      udp.once("error", reject);
      udp.bind(port, options.host, () => {
        udp.off("error", reject);
        resolve();
      });
    });
    await new Promise<void>((resolve, reject) => {
      tcp.once("error", reject);
      tcp.listen(port, options.host, () => {
        tcp.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    for (const cache of caches) cache.stop();
    try {
      udp.close();
    } catch {
      // never bound
    }
    tcp.close(() => {});
    throw error;
  }
  log.info("serving tenants' pods DNS", { address: `${options.host}:${port}` });
  return {
    async close() {
      for (const cache of caches) cache.stop();
      udp.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}
