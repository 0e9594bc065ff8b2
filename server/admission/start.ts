/**
 * Ring0's admission webhooks at run time: the HTTPS server tenant apiservers call, on a port kept in
 * `<stateDir>/webhook-port.json` so the registrations in tenant control planes stay valid across
 * restarts, published through setWebhookEndpoint() for the tenant reconciler to register.
 */

import path from "node:path";
import { processSlot } from "@/server/core/process-slots";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { Logger } from "@/server/logger";
import { cachedDefaultShares } from "@/server/quotas/default-share-repository";
import { createConnectionCache } from "@/server/tenants/connections";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import type { TenantResource } from "@/server/tenants/tenant-resources";
import { ensureVnAgentPki, loadVnAgentPki, type VnAgentPkiSource } from "@/server/vn-agent/pki";
import { openPortBook } from "@/server/vn-agent/ports";
import { AUTHORIZE_PATH, allowsCustomGroupAccess } from "./authorizer";
import { createQuotaAdmission, type QuotaAdmission } from "./quota";
import { refusalRecorder } from "./refusals";
import { QUOTA_WEBHOOK_PATH, setWebhookEndpoint } from "./registration";
import { startWebhookServer, type WebhookServer } from "./webhook-server";

const slot = processSlot<QuotaAdmission | null>("admission.quota");

/** The running quota admission (its ledgers answer usage questions for the API), if any. */
export function getQuotaAdmission(): QuotaAdmission | null {
  return slot.get() ?? null;
}

export function setQuotaAdmission(admission: QuotaAdmission | null): void {
  slot.set(admission);
}

export interface AdmissionOptions {
  stateDir: string;
  /** Where the PKI the webhooks serve with and verify callers against is kept (default: the state dir). */
  pki?: VnAgentPkiSource;
  tenants: { find(tenant: string): Promise<{ resource: TenantResource | undefined } | { error: string }> };
  directory: ControlPlaneDirectory;
  logger: Logger;
  /** Record refusals in the database (default true). */
  recordRefusals?: boolean;
  /** The tenant's default namespace share (default: the database's, cached 10 s per tenant). */
  namespaceDefaultShare?: (tenant: string) => Promise<Record<string, string> | undefined>;
  /**
   * The pod API address, when API servers in pods reach Ring0 there (the local world with real
   * nodes): the webhooks listen on it too, and such tenants' webhooks are registered at it.
   */
  podApiAddress?: string;
  /**
   * Ring0 in a cluster: the webhooks listen on this port of the pod's address too, and API servers
   * in pods are sent to the Service in front of every replica (its URL, e.g. https://10.0.0.9:9443).
   */
  inCluster?: { port: number; podIp: string; serviceUrl: string };
  /**
   * How often the serving certificate is read again (and renewed once less than 30 days are left)
   * while Ring0 runs: default 6 h. A replica up for a year must never serve an expired one, and one
   * replica's renewal reaches the others through the shared Secret.
   */
  renewEveryMs?: number;
}

export async function startAdmission(
  options: AdmissionOptions,
): Promise<{ port: number; admission: QuotaAdmission; handshakes(): number; stop(): Promise<void> }> {
  const log = options.logger.child({ component: "admission" });
  const pki = await ensureVnAgentPki(options.pki ?? options.stateDir);
  const connections = createConnectionCache();
  const admission = createQuotaAdmission({
    async tenantQuota(tenant) {
      const found = await options.tenants.find(tenant);
      if ("error" in found) throw new Error(found.error);
      return found.resource?.spec.quota;
    },
    async connection(tenant): Promise<ClusterConnection | undefined> {
      const lookup = await options.directory.lookup(tenant);
      return lookup.state === "ready" ? connections.connectionFor(tenant, lookup.access) : undefined;
    },
    namespaceDefaultShare: options.namespaceDefaultShare ?? cachedDefaultShares(),
    logger: log,
    onRefusal: options.recordRefusals === false ? undefined : refusalRecorder(log),
  });
  const ports = openPortBook(path.join(path.resolve(options.stateDir), "webhook-port.json"));
  const listen = (port?: number) =>
    startWebhookServer({
      tls: { cert: pki.serving.cert, key: pki.serving.key, clientCa: pki.clientCa.cert },
      handlers: { [QUOTA_WEBHOOK_PATH]: (tenant, request) => admission.review(tenant, request) },
      authorizers: {
        [AUTHORIZE_PATH]: async (tenant, spec) => {
          // Most reviews are settled by the groups alone; a Tenant lookup (cached) only for the rest.
          if (allowsCustomGroupAccess(tenant, spec, [])) return true;
          if (!spec.resourceAttributes) return false;
          const found = await options.tenants.find(tenant);
          const admins = "error" in found ? [] : (found.resource?.spec.admins ?? []);
          return allowsCustomGroupAccess(tenant, spec, admins);
        },
      },
      logger: log,
      port,
      ...(options.inCluster
        ? { alsoOn: [options.inCluster.podIp] }
        : options.podApiAddress
          ? { alsoOn: [options.podApiAddress] }
          : {}),
    });
  let server: WebhookServer;
  const previous = options.inCluster?.port ?? ports.get("webhooks");
  try {
    server = await listen(previous);
  } catch (error) {
    if (options.inCluster || previous === undefined || (error as NodeJS.ErrnoException).code !== "EADDRINUSE")
      throw error;
    log.warn("the webhook port from before is taken; listening on a new one (tenants re-register)", {
      previous,
    });
    server = await listen();
  }
  if (!options.inCluster) ports.record("webhooks", server.port);
  const podBaseUrl = options.inCluster
    ? options.inCluster.serviceUrl
    : options.podApiAddress
      ? `https://${options.podApiAddress}:${server.port}`
      : undefined;
  setWebhookEndpoint({
    baseUrl: `https://127.0.0.1:${server.port}`,
    ...(podBaseUrl ? { podBaseUrl } : {}),
    caBundle: pki.servingCa.cert,
  });
  setQuotaAdmission(admission);
  let served = pki.serving.cert;
  const renewal = setInterval(
    () => {
      loadVnAgentPki(options.pki ?? options.stateDir).then(
        (current) => {
          if (current.serving.cert === served) return;
          server.reloadTls({
            cert: current.serving.cert,
            key: current.serving.key,
            clientCa: current.clientCa.cert,
          });
          served = current.serving.cert;
          log.info("the webhooks serve a renewed certificate");
        },
        (error: unknown) => log.warn("reading the webhooks' certificate again failed", { error }),
      );
    },
    options.renewEveryMs ?? 6 * 60 * 60 * 1000,
  );
  renewal.unref();
  return {
    port: server.port,
    admission,
    handshakes: () => server.handshakes(),
    async stop() {
      clearInterval(renewal);
      setQuotaAdmission(null);
      setWebhookEndpoint(null);
      admission.stop();
      await server.stop();
    },
  };
}
