import { recordAudit } from "@/server/audit/service";
import type { SessionUser } from "@/server/core/roles";
import type { PrismaClient } from "@/server/db/client";
import { env } from "@/server/env";
import { NotFoundError } from "@/server/errors";
import { getGatewayEndpoint } from "@/server/kubeconfigs/gateway-endpoint";
import { grantsInForce } from "@/server/sharing/access";
import { expiryOf } from "@/server/sharing/grants";
import { allGrants } from "@/server/sharing/live";
import { createTokenService } from "@/server/tokens/service";
import { renderSharedKubeconfig, sharedContextName, sharedKubeconfigFilename } from "./shared-kubeconfig";
import type { SharedKubeconfigInput } from "./shared-with-me.schema";

const dayMs = 24 * 60 * 60 * 1000;

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
  { owner, expiresInDays }: SharedKubeconfigInput,
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
  await recordAudit({
    actorId: user.id,
    actorName: user.name,
    actorTenant: user.tenant,
    tenant: owner,
    action: "share.kubeconfig",
    targetKind: "sharing-policy",
    target: grantNames.join(", "),
    result: "success",
    requestId: requestId ?? null,
    detail: { grants: grantNames, tokenPrefix: token.prefix, expiresAt: token.expiresAt.toISOString() },
  });
  return { filename: sharedKubeconfigFilename(owner), context: sharedContextName(owner), kubeconfig };
}
