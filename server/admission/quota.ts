/**
 * Tenant quota admission: the handler behind the `quota.ring0.dev` webhook every tenant control
 * plane with a quota calls. A create or update that would take the tenant over any limit of
 * `Tenant.spec.quota.hard`, summed over all its namespaces, is refused with the resource, the
 * request, the usage and the limit; one that fits is reserved in the tenant's ledger in the same
 * synchronous step, so concurrent requests cannot oversubscribe. ResourceQuota objects (tenant
 * admins' per-namespace shares) are refused when the namespaces' shares would add up to more than
 * the tenant's quota, and a namespace create when the tenant's default share for new namespaces
 * would not fit in what the namespaces' shares leave (never a silent zero: the share is given, or
 * the namespace is refused saying why).
 */
import type { ClusterConnection } from "@/server/k8s/cluster";
import { ResourceQuotaKind } from "@/server/k8s/kinds/core";
import { groupVersionPath } from "@/server/k8s/kinds/kind";
import type { Logger } from "@/server/logger";
import { defaultShareMisfit } from "@/server/quotas/default-share";
import {
  checkAgainst,
  type Exceeded,
  objectUsage,
  refusalMessage,
  subtractUsage,
  type Usage,
} from "@/server/quotas/usage";
import { type CheckedHard, namespaceShare, namespaceShares, tenantHardOf } from "./hard";
import { createLedger, type Ledger, type LedgerKind } from "./ledger";
import type { AdmissionRequest, AdmissionVerdict } from "./webhook-server";

/** The kinds a quota resource needs followed, and the resources each one charges. */
const KINDS: Array<LedgerKind & { resources: string[] }> = (
  [
    ["Pod", "pods", ["requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "pods"]],
    ["Service", "services", ["services"]],
    ["PersistentVolumeClaim", "persistentvolumeclaims", ["persistentvolumeclaims", "requests.storage"]],
    ["ConfigMap", "configmaps", ["configmaps"]],
    ["Secret", "secrets", ["secrets"]],
    ["Namespace", "namespaces", ["namespaces"]],
  ] as const
).map(([kind, plural, resources]) => ({
  kind,
  path: `${groupVersionPath("v1")}/${plural}`,
  resources: [...resources],
  usageOf: (object: unknown, now: Date) => objectUsage(kind, object, now),
}));

/** ResourceQuotas are followed whenever the tenant has a quota: their shares must fit in it. */
const RESOURCE_QUOTAS: LedgerKind = {
  kind: "ResourceQuota",
  path: ResourceQuotaKind.path(),
  usageOf: () => undefined,
};

/** What the ledger needs to follow for a tenant quota. */
export function ledgerKindsFor(hard: CheckedHard): LedgerKind[] {
  const limited = new Set(Object.keys(hard));
  return [
    ...KINDS.filter((kind) => kind.resources.some((resource) => limited.has(resource))),
    RESOURCE_QUOTAS,
  ];
}

export interface QuotaRefusal {
  tenant: string;
  user: string | undefined;
  operation: string;
  kind: string;
  namespace: string | undefined;
  name: string | undefined;
  exceeded: Exceeded[];
  message: string;
}

export interface QuotaAdmissionOptions {
  /** The tenant's current quota (from Tenant.spec.quota; undefined: none). */
  tenantQuota(tenant: string): Promise<{ hard?: Record<string, string> } | undefined>;
  /** Ring0's admin connection to the tenant's control plane (undefined: not serving). */
  connection(tenant: string): Promise<ClusterConnection | undefined>;
  logger: Logger;
  /** How long a first request waits for the tenant's objects to be listed. Default 20 s. */
  syncTimeoutMs?: number;
  /** A ledger unused this long is dropped (its watches end). Default 10 min. */
  ledgerIdleMs?: number;
  now?: () => Date;
  onRefusal?(refusal: QuotaRefusal): void;
  /**
   * The tenant's default namespace share (issue 7), if it has one: a namespace create is refused
   * when that share would not fit in what the namespaces' ResourceQuotas leave of the tenant quota.
   */
  namespaceDefaultShare?(tenant: string): Promise<Record<string, string> | undefined>;
  /** Test seam for the ledgers' list-watches. */
  startWatch?: Parameters<typeof createLedger>[0]["startWatch"];
}

export interface QuotaAdmission {
  review(tenant: string, request: AdmissionRequest): Promise<AdmissionVerdict>;
  /** The tenant's ledger total, once synced (for the API and the UI). */
  usage(tenant: string): Promise<Usage | undefined>;
  stop(): void;
}

type Delta = { usage: Usage } | { verdict: AdmissionVerdict };

function nameOf(object: unknown): { namespace?: string; name?: string } {
  const metadata = (object as { metadata?: { namespace?: string; name?: string } } | null)?.metadata;
  return { namespace: metadata?.namespace, name: metadata?.name };
}

function positivePart(usage: Usage): Usage {
  return Object.fromEntries(Object.entries(usage).filter(([, amount]) => amount > 0n));
}

export function createQuotaAdmission(options: QuotaAdmissionOptions): QuotaAdmission {
  const log = options.logger.child({ component: "quota-admission" });
  const now = options.now ?? (() => new Date());
  const syncTimeoutMs = options.syncTimeoutMs ?? 20_000;
  const ledgers = new Map<
    string,
    { fingerprint: string; conn: ClusterConnection; ledger: Ledger; usedAt: number }
  >();
  const idleMs = options.ledgerIdleMs ?? 10 * 60_000;

  const ledgerFor = (tenant: string, conn: ClusterConnection, hard: CheckedHard): Ledger => {
    const kinds = ledgerKindsFor(hard);
    const fingerprint = kinds.map((kind) => kind.kind).join(",");
    const current = ledgers.get(tenant);
    if (current && current.conn === conn && current.fingerprint === fingerprint) {
      current.usedAt = now().getTime();
      return current.ledger;
    }
    current?.ledger.stop();
    const ledger = createLedger({
      conn,
      kinds,
      logger: log.child({ tenant }),
      now,
      startWatch: options.startWatch,
    });
    ledgers.set(tenant, { fingerprint, conn, ledger, usedAt: now().getTime() });
    return ledger;
  };

  /** A tenant without a quota (or a control plane) needs no ledger: its watches end. */
  const forget = (tenant: string) => {
    ledgers.get(tenant)?.ledger.stop();
    ledgers.delete(tenant);
  };

  // A ledger nobody asked for in a while goes (its quota was cleared and the webhook with it, or the
  // tenant was deleted); the next request builds it again from a fresh list.
  const sweep = setInterval(
    () => {
      const at = now().getTime();
      for (const [tenant, entry] of ledgers) if (at - entry.usedAt > idleMs) forget(tenant);
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();

  const hardOf = async (tenant: string): Promise<CheckedHard | undefined> => {
    const quota = await options.tenantQuota(tenant);
    if (!quota?.hard) return undefined;
    const checked = tenantHardOf(quota.hard);
    if (checked.ignored.length > 0) {
      log.warn("the tenant quota names resources Ring0 does not enforce; they are ignored", {
        tenant,
        ignored: checked.ignored,
      });
    }
    return Object.keys(checked.hard).length > 0 ? checked.hard : undefined;
  };

  /** The usage a request adds (for an update: what grows), or a ResourceQuota check's refusal. */
  const deltaOf = (ledger: Ledger, hard: CheckedHard, request: AdmissionRequest): Delta => {
    const kind = request.kind.kind;
    const sub = request.subResource ?? "";
    const { object, oldObject } = request;
    if (kind === "ResourceQuota" && sub === "") return shareCheck(ledger, hard, request);
    const definition = KINDS.find((candidate) => candidate.kind === kind);
    if (!definition || !object) return { usage: {} };
    const at = now();
    if (request.operation === "CREATE" && sub === "") return { usage: definition.usageOf(object, at) ?? {} };
    if (request.operation === "UPDATE" && (sub === "" || sub === "resize")) {
      const before = oldObject ? (definition.usageOf(oldObject, at) ?? {}) : {};
      return { usage: positivePart(subtractUsage(definition.usageOf(object, at) ?? {}, before)) };
    }
    return { usage: {} };
  };

  /** A ResourceQuota create/update: every namespace's share together must fit the tenant's quota. */
  const shareCheck = (ledger: Ledger, hard: CheckedHard, request: AdmissionRequest): Delta => {
    const { namespace, name } = nameOf(request.object);
    const others = ledger.objects("ResourceQuota").filter((quota) => {
      const other = nameOf(quota);
      return !(other.namespace === (namespace ?? request.namespace) && other.name === (name ?? request.name));
    });
    const problem = namespaceShare(hard, [...others, request.object]);
    return problem ? { verdict: { allowed: false, message: problem } } : { usage: {} };
  };

  /** The default share in nano-units (entries that are not namespace-level quantities left out). */
  const defaultShareOf = async (tenant: string): Promise<CheckedHard | undefined> => {
    const stored = await options.namespaceDefaultShare?.(tenant);
    if (!stored) return undefined;
    const { hard } = tenantHardOf(stored);
    delete hard.namespaces;
    return Object.keys(hard).length > 0 ? hard : undefined;
  };

  return {
    async review(tenant, request) {
      const hard = await hardOf(tenant);
      if (!hard) {
        forget(tenant);
        return { allowed: true };
      }
      const conn = await options.connection(tenant);
      if (!conn) {
        forget(tenant);
        return {
          allowed: false,
          code: 503,
          message: `the control plane of ${tenant} is not reachable from Ring0; retry in a moment`,
        };
      }
      const creatingNamespace =
        request.kind.kind === "Namespace" && request.operation === "CREATE" && !request.subResource;
      const share = creatingNamespace ? await defaultShareOf(tenant) : undefined;
      const ledger = ledgerFor(tenant, conn, hard);
      await ledger.synced(syncTimeoutMs);
      // From here to the reservation nothing awaits: the check and the reservation are one step.
      const misfit = share
        ? defaultShareMisfit(share, hard, namespaceShares(ledger.objects("ResourceQuota")))
        : undefined;
      // Namespaces are checked for the default share even when the quota does not count them.
      const outcome: Delta = misfit
        ? { verdict: { allowed: false, message: misfit } }
        : creatingNamespace && hard.namespaces === undefined
          ? { usage: {} }
          : deltaOf(ledger, hard, request);
      if ("verdict" in outcome) {
        if (!outcome.verdict.allowed) {
          options.onRefusal?.({
            tenant,
            user: request.userInfo?.username,
            operation: request.operation,
            kind: request.kind.kind,
            namespace: request.namespace,
            name: request.name ?? nameOf(request.object).name,
            exceeded: [],
            message: outcome.verdict.message ?? "refused",
          });
        }
        return outcome.verdict;
      }
      const delta = outcome.usage;
      if (Object.keys(delta).length === 0) return { allowed: true };
      const exceeded = checkAgainst(hard, ledger.total(), delta);
      if (exceeded.length > 0) {
        const message = refusalMessage(tenant, exceeded);
        options.onRefusal?.({
          tenant,
          user: request.userInfo?.username,
          operation: request.operation,
          kind: request.kind.kind,
          namespace: request.namespace,
          name: request.name ?? nameOf(request.object).name,
          exceeded,
          message,
        });
        return { allowed: false, message };
      }
      if (!request.dryRun) {
        const { namespace, name } = nameOf(request.object);
        ledger.reserve(request.kind.kind, namespace ?? request.namespace, name ?? request.name ?? "", delta);
      }
      return { allowed: true };
    },
    async usage(tenant) {
      const hard = await hardOf(tenant);
      const conn = hard ? await options.connection(tenant) : undefined;
      if (!hard || !conn) {
        forget(tenant);
        return undefined;
      }
      const ledger = ledgerFor(tenant, conn, hard);
      await ledger.synced(syncTimeoutMs);
      return ledger.total();
    },
    stop() {
      clearInterval(sweep);
      for (const { ledger } of ledgers.values()) ledger.stop();
      ledgers.clear();
    },
  };
}
