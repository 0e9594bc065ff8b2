import { randomUUID } from "node:crypto";
import { isOperator } from "@/server/core/roles";
import { getDb } from "@/server/db/client";
import {
  errorResponse,
  guardFormPost,
  kubeconfigResponse,
  parseFields,
  textResponse,
} from "@/server/kubeconfigs/http";
import { adminKubeconfigRequest } from "@/server/kubeconfigs/schema";
import { createKubeconfigService } from "@/server/kubeconfigs/service";

export const dynamic = "force-dynamic";

/**
 * Operator break-glass: the tenant control plane's admin kubeconfig, as a file download only
 * (never JSON a page script could read), with a required reason that goes to the audit log.
 */
export async function POST(request: Request, { params }: { params: Promise<{ tenant: string }> }) {
  const requestId = randomUUID();
  const { tenant } = await params;
  const guarded = await guardFormPost(request);
  if ("response" in guarded) return guarded.response;
  // Non-operators learn nothing, not even that the route guards something.
  if (!isOperator(guarded.user)) return textResponse(404, `Tenant "${tenant}" was not found.`);
  const input = await parseFields(request, adminKubeconfigRequest);
  if ("response" in input) return input.response;
  try {
    const file = await createKubeconfigService({ db: getDb() }).issueAdminKubeconfig({
      user: guarded.user,
      tenant,
      reason: input.data.reason,
      requestId,
    });
    return kubeconfigResponse(file);
  } catch (error) {
    return errorResponse(error, requestId);
  }
}
