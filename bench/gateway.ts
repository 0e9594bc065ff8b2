/**
 * Kube gateway overhead, each figure a ratio to the same request made directly against the same
 * kube-apiserver with its admin credentials, samples interleaved so both see the same load:
 *   - `kubectl get ns` (N=30 each, discovery cache warm);
 *   - a raw HTTPS GET of /api/v1/namespaces over one keep-alive connection (N=200 each);
 *   - watch-event latency: one watch on ConfigMaps through the gateway and one direct, open at the
 *     same time; the time from sending a ConfigMap create to its ADDED event on each (N=50);
 *   - a grantee's GET: /api/v1/namespaces/shared/pods over keep-alive HTTPS by a member of another
 *     tenant (`bench-grantee`) through the gateway within a live SharingPolicy grant (get/list/watch
 *     pods in `shared`, its RBAC applied as the sharing controller keeps it), interleaved with the
 *     same GET by the tenant's own admin through the gateway and directly with admin credentials
 *     (N=200 each; p50/p99, ratios grantee/member and grantee/direct). The grantee's GET of pods in
 *     `default`, outside the grant, must be refused with 403 every time (N=20).
 *
 * Target: one tenant control plane of the local provisioner (etcd, kube-apiserver,
 * kube-controller-manager on 127.0.0.1) with the tenant defaults applied, so the gateway's
 * impersonated tenant admin is authorised by the tenant's own RBAC. Gateway: createKubeGateway with
 * real token verification (embedded PostgreSQL, migrations) behind its HTTPS listener with Ring0's
 * own CA, the directory over a Ready Tenant object (no super cluster needed). Every process
 * started is gone at the end (checked in /proc). Writes bench/results/gateway.json; never asserts
 * on time, only that every request succeeded (and that every request outside the grant was refused).
 *
 *   npx tsx bench/gateway.ts [http-n=200] [kubectl-n=30] [watch-n=50]
 */
import path from "node:path";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { availableVersions } from "@/server/provisioners/versions";
import { measureGranteeGet, refusalN, sharedPods } from "./gateway/grantee";
import { measureKubectlGetNs } from "./gateway/kubectl";
import { measureGetNamespaces } from "./gateway/namespaces";
import { measureWatchLatency } from "./gateway/watch";
import { granteeTenant, sharedNamespace, startGatewayWorld } from "./gateway/world";
import { sized, writeResults } from "./lib/figures";
import { benchDir, cleanUpOnSignal, cleanupStack, exitWhenDone, finishBench, logger } from "./lib/run";

const httpN = Number(process.argv[2] ?? sized(200, 100));
const kubectlN = Number(process.argv[3] ?? sized(30, 15));
const watchN = Number(process.argv[4] ?? sized(50, 25));

async function main() {
  const root = await benchDir("ring0-bench-gw-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  const results: Record<string, unknown> = { measuredAt: new Date().toISOString() };
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    const world = await startGatewayWorld(root, cleanup, binDir);
    const getNamespaces = await measureGetNamespaces(world, httpN);
    const kubectlGetNs = await measureKubectlGetNs(world, root, path.join(binDir, "kubectl"), kubectlN);
    const watchLatency = await measureWatchLatency(world, cleanup, watchN);
    const granteeGet = await measureGranteeGet(world, cleanup, httpN);

    results.target =
      "a local tenant control plane (local provisioner: etcd, kube-apiserver, kube-controller-manager on 127.0.0.1, tenant defaults applied)";
    results.identities = {
      gateway:
        "a tenant admin's Ring0 API token; the gateway impersonates <tenant>:<user> with the tenant's groups",
      direct: "the control plane's admin client certificate (system:masters), no impersonation",
      grantee: `a member of tenant ${granteeTenant}'s Ring0 API token; the gateway decides the request against one live SharingPolicy grant (get/list/watch pods in ${sharedNamespace}) and impersonates the grantee's own name and groups, authorised by the grant's Role and RoleBinding`,
      member: "the gateway arm's identity (the tenant's own admin token) on the grantee's request",
    };
    results.getNamespacesKeepAliveMs = getNamespaces;
    results.kubectlGetNsMs = kubectlGetNs;
    results.watchEventLatencyMs = watchLatency;
    results.granteeGetPodsKeepAliveMs = granteeGet;
    results.config = { httpN, kubectlN, watchN, refusalN, sharedPods, version: availableVersions()[0] };
  } catch (error) {
    failed = error;
  } finally {
    failed = await finishBench(cleanup, root, failed);
  }
  if (failed) throw failed;
  writeResults("gateway", results);
}

exitWhenDone(main());
