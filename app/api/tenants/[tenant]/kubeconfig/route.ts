import { randomUUID } from "node:crypto";
import { getDb } from "@/server/db/client";
import {
  errorResponse,
  guardFormPost,
  kubeconfigResponse,
  parseFields,
  textResponse,
} from "@/server/kubeconfigs/http";
import { kubeconfigRequest } from "@/server/kubeconfigs/schema";
import { createKubeconfigService } from "@/server/kubeconfigs/service";
import { tenantForUser } from "@/server/tenants/access";

export const dynamic = "force-dynamic";

/** The portal's "Download kubeconfig" form: a fresh API token for the tenant, as a file. */
export async function POST(request: Request, { params }: { params: Promise<{ tenant: string }> }) {
  const requestId = randomUUID();
  const { tenant: requested } = await params;
  const guarded = await guardFormPost(request);
  if ("response" in guarded) return guarded.response;
  const tenant = await tenantForUser(guarded.user, requested);
  if (!tenant) return textResponse(404, `Tenant "${requested}" was not found.`);
  const input = await parseFields(request, kubeconfigRequest);
  if ("response" in input) return input.response;
  try {
    const file = await createKubeconfigService({ db: getDb() }).issueKubeconfig({
      user: guarded.user,
      tenant,
      ...input.data,
      requestId,
    });
    return kubeconfigResponse(file);
  } catch (error) {
    return errorResponse(error, requestId);
  }
}
