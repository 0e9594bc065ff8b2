/**
 * Issuing kubeconfigs. A user's kubeconfig carries a fresh Ring0 API token for one tenant and
 * reaches it through the kube gateway; an operator's break-glass kubeconfig carries the control
 * plane's own admin identity and is always audited with a reason. Secrets never reach the audit log.
 */

import { recordAudit } from "@/server/audit/service";
import { isOperator, type SessionUser } from "@/server/core/roles";
import { tenantNamePattern } from "@/server/core/tenant-name";
import type { PrismaClient } from "@/server/db/client";
import { env } from "@/server/env";
import { ConflictError, InvalidInputError, NotFoundError, UnavailableError } from "@/server/errors";
import { type GatewayEndpoint, getGatewayEndpoint } from "@/server/kubeconfigs/gateway-endpoint";
import { kubeconfigFilename, renderUserKubeconfig } from "@/server/kubeconfigs/render";
import { adminKubeconfigRequest, kubeconfigRequest } from "@/server/kubeconfigs/schema";
import { kubeconfigFromAccess } from "@/server/provisioners/types";
import { type ControlPlaneDirectory, getControlPlaneDirectory } from "@/server/tenants/control-planes";
import { createTokenService } from "@/server/tokens/service";

export interface KubeconfigServiceOptions {
  db: PrismaClient;
  /**
   * Where kubectl reaches the kube gateway and the CA it verifies it with; defaults to what the
   * runtime set at start-up (setGatewayEndpoint), else the configured gateway URL without CA data.
   */
  gateway?: GatewayEndpoint;
  /** Defaults to the directory the runtime installed. */
  directory?: () => ControlPlaneDirectory | null;
  now?: () => Date;
}

export interface IssueKubeconfigInput {
  user: SessionUser;
  tenant: string;
  expiresInDays: number;
  /** The token's name; "kubeconfig <date>" by default. */
  name?: string;
  requestId?: string;
}

export interface IssueAdminKubeconfigInput {
  user: SessionUser;
  tenant: string;
  reason: string;
  requestId?: string;
}

export interface KubeconfigFile {
  filename: string;
  kubeconfig: string;
}

function parsed<T>(
  result:
    | { success: true; data: T }
    | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } },
): T {
  if (result.success) return result.data;
  throw new InvalidInputError(
    result.error.issues
      .map((issue) => `${issue.path.map(String).join(".") || "input"}: ${issue.message}`)
      .join("; "),
  );
}

export function createKubeconfigService({
  db,
  gateway,
  directory = getControlPlaneDirectory,
  now = () => new Date(),
}: KubeconfigServiceOptions) {
  const tokens = createTokenService({ db, now });

  return {
    /** A token-bearing kubeconfig for `tenant` (members and operators; others: not found). */
    async issueKubeconfig(input: IssueKubeconfigInput): Promise<KubeconfigFile> {
      const { expiresInDays, name } = parsed(
        kubeconfigRequest.safeParse({ expiresInDays: input.expiresInDays, name: input.name }),
      );
      const { user, tenant, requestId } = input;
      const { plaintext, token } = await tokens.issueToken({
        user,
        tenant,
        name: name ?? `kubeconfig ${now().toISOString().slice(0, 10)}`,
        expiresInDays,
        requestId,
      });
      const endpoint = gateway ?? getGatewayEndpoint() ?? { gatewayUrl: env().gatewayUrl };
      const kubeconfig = renderUserKubeconfig({
        gatewayUrl: endpoint.gatewayUrl,
        caPem: endpoint.caPem,
        tenant,
        user: user.subject,
        token: plaintext,
      });
      await recordAudit({
        actorId: user.id,
        actorName: user.name,
        actorTenant: user.tenant,
        tenant,
        action: "kubeconfig.issue",
        targetKind: "kubeconfig",
        target: token.prefix,
        result: "success",
        requestId: requestId ?? null,
        detail: { tokenId: token.id, tokenName: token.name, expiresAt: token.expiresAt.toISOString() },
      });
      return { filename: kubeconfigFilename(tenant), kubeconfig };
    },

    /**
     * Break-glass: the control plane's admin kubeconfig, for operators only (anyone else: not
     * found), with the reason recorded in the audit log.
     */
    async issueAdminKubeconfig(input: IssueAdminKubeconfigInput): Promise<KubeconfigFile> {
      const { user, tenant, requestId } = input;
      if (!isOperator(user) || !tenantNamePattern.test(tenant))
        throw new NotFoundError(`Tenant "${tenant}" was not found.`);
      const { reason } = parsed(adminKubeconfigRequest.safeParse({ reason: input.reason }));
      const controlPlanes = directory();
      if (!controlPlanes) {
        throw new UnavailableError(
          "Ring0 cannot reach tenant control planes right now (no control plane directory is running). Try again shortly.",
        );
      }
      const found = await controlPlanes.lookup(tenant);
      if (found.state === "absent") throw new NotFoundError(`Tenant "${tenant}" was not found.`);
      if (found.state === "unavailable") {
        throw new ConflictError(
          `The control plane of tenant "${tenant}" is not ready (phase ${found.phase}): ${found.message}`,
        );
      }
      await recordAudit({
        actorId: user.id,
        actorName: user.name,
        actorTenant: user.tenant,
        tenant,
        action: "kubeconfig.admin-issue",
        targetKind: "kubeconfig",
        target: tenant,
        result: "success",
        requestId: requestId ?? null,
        detail: { reason, server: found.access.server },
      });
      return { filename: kubeconfigFilename(tenant), kubeconfig: kubeconfigFromAccess(found.access, tenant) };
    },
  };
}

export type KubeconfigService = ReturnType<typeof createKubeconfigService>;
