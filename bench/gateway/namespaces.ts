/**
 * A raw HTTPS GET of /api/v1/namespaces over one keep-alive connection per arm, through the
 * gateway against directly, interleaved; and, informational, where the gateway's added time goes.
 */

import { kubeGroupsFor, kubeUserName } from "@/server/tenants/kube-identity";
import { createTokenService } from "@/server/tokens/service";
import { httpsRequest } from "../lib/clients";
import { ratio, say, summary } from "../lib/figures";
import { type Arm, type GatewayWorld, order } from "./world";

export async function measureGetNamespaces(world: GatewayWorld, n: number) {
  const { arms, agents } = world;
  const get = async (arm: Arm): Promise<number> => {
    const started = performance.now();
    const answer = await httpsRequest(`${arms[arm].base}/api/v1/namespaces`, arms[arm].identity, {
      agent: agents[arm],
    });
    const elapsed = performance.now() - started;
    if (answer.status !== 200) throw new Error(`GET namespaces via ${arm}: ${answer.status} ${answer.body}`);
    return elapsed;
  };
  for (let i = 0; i < 20; i++) for (const arm of order(i)) await get(arm);
  const http = { gateway: [] as number[], direct: [] as number[] };
  for (let i = 0; i < n; i++) for (const arm of order(i)) http[arm].push(await get(arm));
  const httpResult = {
    gateway: summary(http.gateway, 2),
    direct: summary(http.direct, 2),
    ratioP50: ratio(summary(http.gateway, 2).p50, summary(http.direct, 2).p50),
    ratioP95: ratio(summary(http.gateway, 2).p95, summary(http.direct, 2).p95),
    addedP50Ms: +(summary(http.gateway, 2).p50 - summary(http.direct, 2).p50).toFixed(2),
  };
  say(`GET /api/v1/namespaces keep-alive: ${JSON.stringify(httpResult)}`);
  const breakdown = await measureBreakdown(world, n);
  say(`breakdown: ${JSON.stringify(breakdown)}`);
  return { ...httpResult, breakdown };
}

/**
 * The same direct GET with the impersonation headers the gateway adds (the API server's side of
 * it), and token verification alone (Ring0's side: PostgreSQL lookups per request).
 */
async function measureBreakdown(world: GatewayWorld, n: number) {
  const { tenant, arms, agents } = world;
  const identityHeaders = {
    "impersonate-user": kubeUserName(tenant, `${tenant}:${tenant}-admin`),
    "impersonate-group": kubeGroupsFor(tenant, "tenant-admin"),
  };
  const impersonating: number[] = [];
  const verifying: number[] = [];
  const tokens = createTokenService({ db: world.db });
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const answer = await httpsRequest(`${arms.direct.base}/api/v1/namespaces`, arms.direct.identity, {
      agent: agents.direct,
      headers: identityHeaders,
    });
    impersonating.push(performance.now() - started);
    if (answer.status !== 200)
      throw new Error(`impersonated GET namespaces: ${answer.status} ${answer.body}`);
    const verifyStarted = performance.now();
    if (!(await tokens.verifyToken(world.token))) throw new Error("the bench token did not verify");
    verifying.push(performance.now() - verifyStarted);
  }
  return {
    directImpersonating: summary(impersonating, 2),
    verifyTokenOnly: summary(verifying, 2),
  };
}
