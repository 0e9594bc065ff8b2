/**
 * The process's shared state, declared in one place.
 *
 * Ring0 is one Node process holding several module graphs: the custom server (server.ts), Next's
 * route handlers and server components, and modules dev mode reloads. State that must exist once
 * per process (a connection, a registry, a cache) therefore lives in a slot on `globalThis`, not in
 * a module variable. Every slot is named here with what it holds; `processSlot(name)` is the only
 * way to reach one.
 */
export const processSlots = {
  env: "the parsed configuration and the process.env it was parsed from",
  db: "the Prisma client, its URL and connection pool",
  "k8s.superCluster": "the super cluster connection, set at start-up",
  superClusterProblem: "why the super cluster is not connected, for /api/ready",
  startParts: "what of Ring0 still starts behind its listening server (super cluster, tenants)",
  "db.problem": "why the database is down while its embedded PostgreSQL is restarted, for /api/ready",
  superClusterHealing: "what of the local super cluster its watchdog is starting again, for /api/ready",
  "k8s.informers": "the shared, reference-counted informer caches",
  "gateway.endpoint": "where kubeconfigs point kubectl: the gateway's URL and CA",
  "embedded-iam": "the embedded IAM's issuer and seed accounts, when it runs",
  "tenants.controlPlaneDirectory": "where a tenant's control plane is found at request time",
  "admission.webhookEndpoint": "the quota webhook's URL and CA bundle, once it listens",
  "admission.quota": "the running quota admission and its ledgers",
  syncer: "the syncer running in this process, if this replica leads",
  "vnAgent.endpoints": "each node's vn-agent address",
  vnAgentLogRings: "the last log lines of each node's vn-agent",
  nodeLogProviders: "who serves a node's logs: the vn-agents or kwok",
  streamRegistry: "the open browser streams, with their caps per user and tenant",
  "sharing.accessWatch": "open access under a grant, ended when the grant stops covering it",
  "sharing.usage": "the windows that record a grant's use at most once per minute",
} as const;

export type ProcessSlotName = keyof typeof processSlots;

export interface ProcessSlot<T> {
  get(): T | undefined;
  set(value: T | undefined): void;
  /** The slot's value, made by `make` on first use. */
  ensure(make: () => T): T;
}

/** The slot `name` (keyed `Symbol.for("ring0.<name>")`, so every module graph reaches the same one). */
export function processSlot<T>(name: ProcessSlotName): ProcessSlot<T> {
  const key = Symbol.for(`ring0.${name}`);
  const holder = globalThis as unknown as Record<symbol, T | undefined>;
  return {
    get: () => holder[key],
    set: (value) => {
      holder[key] = value;
    },
    ensure: (make) => {
      const existing = holder[key];
      if (existing !== undefined && existing !== null) return existing;
      const made = make();
      holder[key] = made;
      return made;
    },
  };
}
