import type { Context } from "@/server/api/trpc";
import type { SessionUser } from "@/server/core/roles";
import { createKubeconfigService } from "@/server/kubeconfigs/service";
import type { KubeconfigsIssueInput } from "./issue.schema";

/** A fresh token-bearing kubeconfig for the tenant; the YAML is the only copy of the token. */
export function issueKubeconfig(
  ctx: Context & { user: SessionUser; tenant: string },
  input: KubeconfigsIssueInput,
) {
  return createKubeconfigService({ db: ctx.db }).issueKubeconfig({
    user: ctx.user,
    tenant: ctx.tenant,
    expiresInDays: input.expiresInDays,
    name: input.name,
    requestId: ctx.requestId,
  });
}
