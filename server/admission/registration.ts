/**
 * Registering Ring0's quota webhook in a tenant control plane. Only tenants with a quota get it, and
 * only for the kinds their quota limits, plus ResourceQuotas and namespace creates (a new namespace
 * must have room for the tenant's default share): a tenant without a quota never depends on Ring0
 * being up to write to its own control plane.
 *
 * Failure policy Fail, timeout 5 s — deliberately: a quota is a promise to every other tenant, and
 * an Ignore policy would let a tenant oversubscribe whenever Ring0 restarts. The cost is that
 * creates of limited kinds wait for Ring0 (deletes, reads and every other kind never do). The
 * syncer holds over-quota pods as a backstop for objects that got in without the webhook (created
 * before the quota was set, or while it was being registered).
 */
import { processSlot } from "@/server/core/process-slots";
import { deleteObject, type KubeObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { managedLabels } from "@/server/tenants/defaults";
import { AUTHORIZE_PATH } from "./authorizer";
import { type CheckedHard, tenantHardOf } from "./hard";

export const QUOTA_WEBHOOK_CONFIGURATION = "ring0-quota";
export const QUOTA_WEBHOOK_NAME = "quota.ring0.dev";
export const QUOTA_WEBHOOK_PATH = "/validate/quota";
export const QUOTA_WEBHOOK_TIMEOUT_SECONDS = 5;

export interface WebhookEndpoint {
  /** https://127.0.0.1:<port> */
  baseUrl: string;
  /** https://<pod API address>:<port>, where API servers in pods reach it (when they can). */
  podBaseUrl?: string;
  /** PEM of the CA the webhook server's certificate chains to. */
  caBundle: string;
}

const slot = processSlot<WebhookEndpoint | null>("admission.webhookEndpoint");

/** Published by the runtime once the webhook server listens (a process slot: every module graph reads it). */
export function setWebhookEndpoint(endpoint: WebhookEndpoint | null): void {
  slot.set(endpoint);
}

export function getWebhookEndpoint(): WebhookEndpoint | null {
  return slot.get() ?? null;
}

/** Where API servers in pods call Ring0's authorization webhook, once the webhooks listen there. */
export function podAuthorizationUrl(): string | undefined {
  const endpoint = getWebhookEndpoint();
  return endpoint?.podBaseUrl ? `${endpoint.podBaseUrl}${AUTHORIZE_PATH}` : undefined;
}

const rule = (resources: string[], operations: string[]) => ({
  apiGroups: [""],
  apiVersions: ["v1"],
  resources,
  operations,
  scope: "*",
});

/** The ValidatingWebhookConfiguration for a tenant quota (pure: unit-tested). */
export function quotaWebhookManifest(hard: CheckedHard, endpoint: WebhookEndpoint): KubeObject {
  const limited = new Set(Object.keys(hard));
  const has = (...resources: string[]) => resources.some((resource) => limited.has(resource));
  const rules = [
    ...(has("requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "pods")
      ? [rule(["pods"], ["CREATE"]), rule(["pods/resize"], ["UPDATE"])]
      : []),
    ...(has("services") ? [rule(["services"], ["CREATE"])] : []),
    ...(has("persistentvolumeclaims", "requests.storage")
      ? [rule(["persistentvolumeclaims"], ["CREATE", "UPDATE"])]
      : []),
    ...(has("configmaps") ? [rule(["configmaps"], ["CREATE"])] : []),
    ...(has("secrets") ? [rule(["secrets"], ["CREATE"])] : []),
    // Always: a new namespace must have room for the tenant's default share, whether or not
    // namespaces themselves are limited.
    rule(["namespaces"], ["CREATE"]),
    rule(["resourcequotas"], ["CREATE", "UPDATE"]),
  ];
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: {
      name: QUOTA_WEBHOOK_CONFIGURATION,
      labels: managedLabels,
      annotations: {
        "ring0.dev/description":
          "Ring0 enforces the tenant's quota across all its namespaces (Tenant.spec.quota on the super cluster).",
      },
    },
    webhooks: [
      {
        name: QUOTA_WEBHOOK_NAME,
        admissionReviewVersions: ["v1"],
        sideEffects: "NoneOnDryRun",
        failurePolicy: "Fail",
        matchPolicy: "Equivalent",
        timeoutSeconds: QUOTA_WEBHOOK_TIMEOUT_SECONDS,
        clientConfig: {
          url: `${endpoint.baseUrl}${QUOTA_WEBHOOK_PATH}`,
          caBundle: Buffer.from(endpoint.caBundle).toString("base64"),
        },
        rules,
      },
    ],
  };
}

/**
 * Bring the tenant's webhook registration in line with its quota: applied when it has one (and
 * Ring0's webhook server listens where the tenant's API server reaches it), removed when it has
 * none. An API server in a pod (`inPods`) reaches the webhooks only on the pod API address; where
 * they do not listen there, no webhook is registered (a Fail policy would refuse every pod) and the
 * syncer alone holds the quota. Returns what was done, for logs.
 */
export async function syncQuotaWebhook(
  conn: ClusterConnection,
  quota: { hard?: Record<string, string> } | undefined,
  options: { inPods?: boolean } = {},
): Promise<"applied" | "removed" | "absent" | "no-endpoint"> {
  const { hard } = tenantHardOf(quota?.hard ?? {});
  const endpoint = getWebhookEndpoint();
  const reachable = options.inPods
    ? endpoint?.podBaseUrl
      ? { ...endpoint, baseUrl: endpoint.podBaseUrl }
      : undefined
    : (endpoint ?? undefined);
  if (Object.keys(hard).length === 0 || (options.inPods && !reachable)) {
    const deleted = await deleteObject(conn, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: QUOTA_WEBHOOK_CONFIGURATION },
    });
    return deleted ? "removed" : "absent";
  }
  if (!reachable) return "no-endpoint";
  await serverSideApply(conn, quotaWebhookManifest(hard, reachable), { force: true });
  return "applied";
}
