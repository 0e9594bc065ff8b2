/**
 * The kubeconfig of a grantee for an owner's shared namespaces: one context `<owner>-shared` whose
 * cluster is the kube gateway's URL for the owner, and whose user is an API token of the grantee for
 * their own tenant (the gateway admits it to the owner only within a live grant). Rendered by
 * server/kubeconfigs/render.ts with the context named.
 */
import { auditAs } from "@/server/audit/service";
import type { SessionUser } from "@/server/core/roles";
import type { PrismaClient } from "@/server/db/client";
import { env } from "@/server/env";
import { NotFoundError } from "@/server/errors";
import { getGatewayEndpoint } from "@/server/kubeconfigs/gateway-endpoint";
import { renderUserKubeconfig } from "@/server/kubeconfigs/render";
import { grantsInForce } from "@/server/sharing/access";
import { expiryOf } from "@/server/sharing/grants";
import { allGrants } from "@/server/sharing/live";
import { createTokenService } from "@/server/tokens/service";

const dayMs = 24 * 60 * 60 * 1000;

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

export interface SharedKubeconfigContext {
  user: SessionUser;
  db: PrismaClient;
  requestId?: string;
}

/**
 * A kubeconfig for what `owner` shares with the caller: only while a live grant of `owner` includes
 * them (otherwise the owner is "not found", as for anyone else). The token is a new one of the
 * caller for their own tenant, living no longer than the grants do; issuing it is audited under the
 * owner, so the owner's admins see who took kubectl access to what they share.
 */
export async function issueSharedKubeconfig(
  { user, db, requestId }: SharedKubeconfigContext,
  { owner, expiresInDays }: { owner: string; expiresInDays: number },
  now = new Date(),
) {
  const grants = grantsInForce(await allGrants(), owner, user, now);
  if (grants.length === 0) throw new NotFoundError(`Tenant "${owner}" was not found.`);
  // The latest expiry among the grants (none if one never expires) bounds the token's lifetime.
  const expiries = grants.map((grant) => expiryOf(grant));
  const lastExpiry = expiries.some((expiry) => expiry === null)
    ? null
    : Math.max(...expiries.map((expiry) => (expiry as Date).getTime()));
  const days =
    lastExpiry === null
      ? expiresInDays
      : Math.max(1, Math.min(expiresInDays, Math.ceil((lastExpiry - now.getTime()) / dayMs)));
  const { plaintext, token } = await createTokenService({ db, now: () => now }).issueToken({
    user,
    tenant: user.tenant,
    name: `shared by ${owner} ${now.toISOString().slice(0, 10)}`,
    expiresInDays: days,
    requestId,
  });
  const endpoint = getGatewayEndpoint() ?? { gatewayUrl: env().gatewayUrl };
  const kubeconfig = renderSharedKubeconfig({
    gatewayUrl: endpoint.gatewayUrl,
    caPem: endpoint.caPem,
    owner,
    user: user.subject,
    token: plaintext,
  });
  const grantNames = grants.map((grant) => grant.metadata.name);
  await auditAs({ user, requestId, db })({
    tenant: owner,
    action: "share.kubeconfig",
    targetKind: "sharing-policy",
    target: grantNames.join(", "),
    detail: { grants: grantNames, tokenPrefix: token.prefix, expiresAt: token.expiresAt.toISOString() },
  });
  return { filename: sharedKubeconfigFilename(owner), context: sharedContextName(owner), kubeconfig };
}
