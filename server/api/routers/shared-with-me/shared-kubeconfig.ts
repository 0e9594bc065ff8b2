/**
 * The kubeconfig of a grantee for an owner's shared namespaces: one context `<owner>-shared` whose
 * cluster is the kube gateway's URL for the owner, and whose user is an API token of the grantee for
 * their own tenant (the gateway admits it to the owner only within a live grant). Rendered by
 * server/kubeconfigs/render.ts with the context named.
 */
import { renderUserKubeconfig } from "@/server/kubeconfigs/render";

export interface SharedKubeconfigInput {
  gatewayUrl: string;
  caPem?: string;
  owner: string;
  /** The grantee's subject, e.g. `globex:globex-member`. */
  user: string;
  token: string;
}

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
  return renderUserKubeconfig({
    gatewayUrl,
    caPem,
    tenant: owner,
    user,
    token,
    context: sharedContextName(owner),
  });
}
