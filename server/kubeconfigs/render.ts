/**
 * Kubeconfigs Ring0 hands to people. A user's kubeconfig reaches the tenant only through Ring0's
 * kube gateway (https: kubectl sends tokens only over TLS) with a Ring0 API token. It carries no
 * admin material; its only CA data is the CA of the gateway's certificate when Ring0 uses its own
 * (otherwise the system's CAs verify the gateway). It never skips verification.
 */

import { z } from "zod";
import { tenantNameField } from "@/server/core/tenant-name";
import { isWellFormedToken } from "@/server/tokens/format";

const pemCertificate = /^\s*(-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\s*)+$/;

const userKubeconfigInput = z.object({
  gatewayUrl: z
    .url({ error: "gatewayUrl: expected an absolute http(s) URL" })
    .refine((url) => /^https?:\/\//.test(url), "gatewayUrl: expected an http or https URL"),
  caPem: z.string().regex(pemCertificate, "caPem: expected PEM certificates").optional(),
  tenant: tenantNameField("tenant: expected a tenant name"),
  user: z.string().trim().min(1, "user: expected a name").max(200, "user: expected at most 200 characters"),
  token: z.string().refine(isWellFormedToken, "token: expected a Ring0 API token (r0_…)"),
  /** The context's name (and its cluster's, `ring0-<context>`); the tenant's name by default. */
  context: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "context: expected a DNS label")
    .optional(),
});
export type UserKubeconfigInput = z.input<typeof userKubeconfigInput>;

/** The gateway URL kubectl talks to for a tenant. */
export function tenantGatewayUrl(gatewayUrl: string, tenant: string): string {
  return `${gatewayUrl.replace(/\/+$/, "")}/k8s/tenants/${encodeURIComponent(tenant)}`;
}

/** A one-line YAML scalar: JSON strings are valid YAML and quote everything that needs it. */
const scalar = (value: string) => JSON.stringify(value);

/**
 * One cluster `ring0-<context>` (with `certificate-authority-data` when `caPem` is given) on the
 * tenant's gateway URL, one user with the token, one context (`<tenant>` unless named) made current.
 * A grantee's kubeconfig for an owner is the same with the owner as tenant and `<owner>-shared`.
 */
export function renderUserKubeconfig(input: UserKubeconfigInput): string {
  const { gatewayUrl, caPem, tenant, user, token, context = tenant } = userKubeconfigInput.parse(input);
  const cluster = `ring0-${context}`;
  const userName = `${user}@${cluster}`;
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${scalar(cluster)}`,
    "  cluster:",
    `    server: ${scalar(tenantGatewayUrl(gatewayUrl, tenant))}`,
    ...(caPem
      ? [`    certificate-authority-data: ${scalar(Buffer.from(`${caPem.trim()}\n`).toString("base64"))}`]
      : []),
    "users:",
    `- name: ${scalar(userName)}`,
    "  user:",
    `    token: ${scalar(token)}`,
    "contexts:",
    `- name: ${scalar(context)}`,
    "  context:",
    `    cluster: ${scalar(cluster)}`,
    `    user: ${scalar(userName)}`,
    `current-context: ${scalar(context)}`,
    "preferences: {}",
    "",
  ].join("\n");
}

/** The file name a kubeconfig download gets. */
export function kubeconfigFilename(tenant: string): string {
  return `${tenant}.kubeconfig`;
}
