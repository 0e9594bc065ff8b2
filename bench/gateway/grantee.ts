/**
 * A grantee's GET: /api/v1/namespaces/shared/pods over keep-alive HTTPS by a member of another
 * tenant through the gateway within the live SharingPolicy grant (its RBAC applied as the sharing
 * controller keeps it), against the same GET by the tenant's own admin through the gateway and
 * directly with admin credentials, the three rotated per round. Outside the grant (pods in
 * `default`), the grantee must be refused with 403 every time.
 */
import { type KubeObject, serverSideApply } from "@/server/k8s/apply";
import { grantRbacManifests } from "@/server/sharing/rbac";
import { httpsAgent, httpsRequest } from "../lib/clients";
import { percentile, ratio, round, say, summary } from "../lib/figures";
import { type CleanupStack, waitFor } from "../lib/run";
import { type GatewayWorld, sharedNamespace } from "./world";

/** The grantee's GETs outside the grant, each of which must be refused. */
export const refusalN = 20;
/** Pods in the shared namespace (never scheduled: the control plane has no scheduler or nodes). */
export const sharedPods = 5;

/** p50, p95 and p99 (the tail a grant check per request would show in). */
const withP99 = (samples: number[], digits = 2) => ({
  ...summary(samples, digits),
  p99: round(percentile(samples, 99), digits),
});

/** The shared namespace, its pods, and the grant's Role and RoleBinding in the owner's control plane. */
async function shareThePods(world: GatewayWorld): Promise<void> {
  const { conn } = world;
  await serverSideApply(
    conn,
    { apiVersion: "v1", kind: "Namespace", metadata: { name: sharedNamespace } },
    { force: true },
  );
  for (let i = 0; i < sharedPods; i++) {
    const pod: KubeObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `bench-${i}`, namespace: sharedNamespace },
      spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] },
    };
    // Admission wants the namespace's default ServiceAccount, which the controller manager creates.
    await waitFor(
      `pod bench-${i} in ${sharedNamespace}`,
      async () => Boolean(await serverSideApply(conn, pod, { force: true })),
      { timeoutMs: 60_000, everyMs: 250 },
    );
  }
  for (const manifest of grantRbacManifests(world.grant))
    await serverSideApply(conn, manifest, { force: true });
}

export async function measureGranteeGet(world: GatewayWorld, cleanup: CleanupStack, n: number) {
  await shareThePods(world);
  const shared = {
    grantee: { base: world.arms.gateway.base, identity: { ca: world.gateway.ca, token: world.granteeToken } },
    member: world.arms.gateway,
    direct: world.arms.direct,
  };
  type SharedArm = keyof typeof shared;
  const sharedArms: SharedArm[] = ["grantee", "member", "direct"];
  const sharedOrder = (i: number): SharedArm[] => [
    ...sharedArms.slice(i % sharedArms.length),
    ...sharedArms.slice(0, i % sharedArms.length),
  ];
  const sharedAgents = {
    grantee: httpsAgent(shared.grantee.identity, true),
    member: httpsAgent(shared.member.identity, true),
    direct: httpsAgent(shared.direct.identity, true),
  };
  cleanup.push("shared agents", () => {
    for (const agent of Object.values(sharedAgents)) agent.destroy();
  });
  const getShared = async (arm: SharedArm, namespace = sharedNamespace) => {
    const started = performance.now();
    const answer = await httpsRequest(
      `${shared[arm].base}/api/v1/namespaces/${namespace}/pods`,
      shared[arm].identity,
      {
        agent: sharedAgents[arm],
      },
    );
    return { elapsed: performance.now() - started, answer };
  };
  const getPods = async (arm: SharedArm): Promise<number> => {
    const { elapsed, answer } = await getShared(arm);
    if (answer.status !== 200)
      throw new Error(`GET ${sharedNamespace} pods via ${arm}: ${answer.status} ${answer.body}`);
    const items = (JSON.parse(answer.body) as { items: unknown[] }).items.length;
    if (items !== sharedPods)
      throw new Error(`GET ${sharedNamespace} pods via ${arm}: ${items} pods, not ${sharedPods}`);
    return elapsed;
  };
  // The grant's RoleBinding takes effect once the API server's RBAC informer has it.
  await waitFor("the grantee's GET allowed", async () => (await getPods("grantee")) >= 0, {
    timeoutMs: 30_000,
    everyMs: 100,
  });
  for (let i = 0; i < 21; i++) for (const arm of sharedOrder(i)) await getPods(arm);
  const samples = { grantee: [] as number[], member: [] as number[], direct: [] as number[] };
  for (let i = 0; i < n; i++) for (const arm of sharedOrder(i)) samples[arm].push(await getPods(arm));
  const grantee = withP99(samples.grantee);
  const member = withP99(samples.member);
  const direct = withP99(samples.direct);

  // Outside the grant (pods in `default`): refused by the gateway, every time.
  const refusals: number[] = [];
  for (let i = 0; i < refusalN; i++) refusals.push((await getShared("grantee", "default")).answer.status);
  const refused = refusals.filter((status) => status === 403).length;
  if (refused !== refusalN)
    throw new Error(
      `the grantee's GET of pods in default: ${refused}/${refusalN} refused (${refusals.join(", ")})`,
    );

  const result = {
    grantee,
    member,
    direct,
    ratioGranteeToMemberP50: ratio(grantee.p50, member.p50),
    ratioGranteeToMemberP99: ratio(grantee.p99, member.p99),
    ratioGranteeToDirectP50: ratio(grantee.p50, direct.p50),
    ratioGranteeToDirectP99: ratio(grantee.p99, direct.p99),
    addedOverMemberP50Ms: +(grantee.p50 - member.p50).toFixed(2),
    refusedOutsideGrant: { n: refusalN, status403: refused },
  };
  say(`GET /api/v1/namespaces/${sharedNamespace}/pods keep-alive (grantee): ${JSON.stringify(result)}`);
  return result;
}
