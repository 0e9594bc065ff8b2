/**
 * Kubeconfigs Ring0 hands to people. A user's kubeconfig reaches the tenant only through Ring0's
 * kube gateway with a Ring0 API token: it carries no admin material and no CA data (plain http
 * needs none; over https the gateway presents a certificate the system's CAs trust).
 */
import { z } from "zod";
import { tenantNamePattern } from "@/server/auth/roles";
import { isWellFormedToken } from "@/server/tokens/format";

const userKubeconfigInput = z.object({
  publicUrl: z
    .url({ error: "publicUrl: expected an absolute http(s) URL" })
    .refine((url) => /^https?:\/\//.test(url), "publicUrl: expected an http or https URL"),
  tenant: z.string().regex(tenantNamePattern, "tenant: expected a tenant name"),
  user: z.string().trim().min(1, "user: expected a name").max(200, "user: expected at most 200 characters"),
  token: z.string().refine(isWellFormedToken, "token: expected a Ring0 API token (r0_…)"),
});
export type UserKubeconfigInput = z.input<typeof userKubeconfigInput>;

/** The gateway URL kubectl talks to for a tenant. */
export function tenantGatewayUrl(publicUrl: string, tenant: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/k8s/tenants/${encodeURIComponent(tenant)}`;
}

/** A one-line YAML scalar: JSON strings are valid YAML and quote everything that needs it. */
const scalar = (value: string) => JSON.stringify(value);

/** One cluster `ring0-<tenant>`, one user with the token, one context `<tenant>` made current. */
export function renderUserKubeconfig(input: UserKubeconfigInput): string {
  const { publicUrl, tenant, user, token } = userKubeconfigInput.parse(input);
  const cluster = `ring0-${tenant}`;
  const userName = `${user}@${cluster}`;
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${scalar(cluster)}`,
    "  cluster:",
    `    server: ${scalar(tenantGatewayUrl(publicUrl, tenant))}`,
    "users:",
    `- name: ${scalar(userName)}`,
    "  user:",
    `    token: ${scalar(token)}`,
    "contexts:",
    `- name: ${scalar(tenant)}`,
    "  context:",
    `    cluster: ${scalar(cluster)}`,
    `    user: ${scalar(userName)}`,
    `current-context: ${scalar(tenant)}`,
    "preferences: {}",
    "",
  ].join("\n");
}

/** The file name a kubeconfig download gets. */
export function kubeconfigFilename(tenant: string): string {
  return `${tenant}.kubeconfig`;
}
