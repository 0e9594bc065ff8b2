/**
 * The kubeconfig of a grantee for an owner's shared namespaces: one context `<owner>-shared` whose
 * cluster is the kube gateway's URL for the owner, and whose user is an API token of the grantee for
 * their own tenant (the gateway admits it to the owner only within a live grant). Same shape and
 * quoting as server/kubeconfigs/render.ts, which names the context after the token's own tenant.
 */
import { tenantGatewayUrl } from "@/server/kubeconfigs/render";

export interface SharedKubeconfigInput {
  gatewayUrl: string;
  caPem?: string;
  owner: string;
  /** The grantee's subject, e.g. `globex:globex-member`. */
  user: string;
  token: string;
}

const scalar = (value: string) => JSON.stringify(value);

export function sharedContextName(owner: string): string {
  return `${owner}-shared`;
}

export function sharedKubeconfigFilename(owner: string): string {
  return `${sharedContextName(owner)}.kubeconfig`;
}

export function renderSharedKubeconfig({
  gatewayUrl,
  caPem,
  owner,
  user,
  token,
}: SharedKubeconfigInput): string {
  const context = sharedContextName(owner);
  const cluster = `ring0-${context}`;
  const userName = `${user}@${cluster}`;
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${scalar(cluster)}`,
    "  cluster:",
    `    server: ${scalar(tenantGatewayUrl(gatewayUrl, owner))}`,
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
