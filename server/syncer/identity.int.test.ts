/**
 * A tenant pod's identity below (issue 18) on real parts: a tenant control plane, the run's super
 * cluster and the syncer, with the tenant's pods given an API address (their pods are simulated here;
 * server/cluster/real-node/real-node.int.test.ts runs the same from inside a real container). The
 * identity secret holds a token the tenant's API server accepts for the pod's own service account,
 * bound to the tenant's pod, and the tenant's CA; the pod below reads them from it and names the
 * tenant's API address; the secret goes with the pod, and is renewed when due.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObject, deleteObject, type KubeObject } from "@/server/k8s/apply";
import { listEventsFor } from "@/server/k8s/events";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { type DataPlaneWorld, startDataPlaneWorld } from "@/test/integration/data-plane-world";
import { REFRESH_ANNOTATION } from "./identity-secrets";
import { superNamespace } from "./naming";
import { identitySecretName } from "./pod-identity";
import { type Obj, readOrUndefined, ref } from "./test-world";

const logger = createLogger({ service: "syncer-identity-it" }, "error");
const tenant = `si-${Math.random().toString(36).slice(2, 7)}`;
const podEndpoint = { host: "10.244.255.1", port: 443 };
let world: DataPlaneWorld;

const below = (kind: string, name: string) =>
  readOrUndefined<Obj>(world.superCluster, ref(kind, name, superNamespace(tenant, "default")));

/** The tenant's API server's word on a token: who it is, or undefined when it refuses it. */
async function tokenReview(token: string) {
  const review = await kubeRequest<{
    status: { authenticated?: boolean; user?: { username?: string; extra?: Record<string, string[]> } };
  }>(world.admin[tenant] as never, {
    method: "POST",
    path: "/apis/authentication.k8s.io/v1/tokenreviews",
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
  });
  return review.status.authenticated ? review.status.user : undefined;
}

const decoded = (secret: Obj, key: string) =>
  Buffer.from((secret.data as Record<string, string>)[key] ?? "", "base64").toString("utf8");

beforeAll(async () => {
  world = await startDataPlaneWorld({ tenants: [tenant], logger, name: "syncer-identity-it", podEndpoint });
}, 300_000);

afterAll(async () => {
  await world?.stop();
}, 120_000);

describe("a tenant pod's identity below", () => {
  let pod: Obj;

  it("is its own tenant's token and CA, read from its identity secret, and the tenant's API address", async () => {
    const conn = world.admin[tenant] as never;
    await createObject(conn, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "api-client", namespace: "default" },
      spec: { containers: [{ name: "main", image: "kubectl" }], terminationGracePeriodSeconds: 0 },
    } as KubeObject);
    pod = (await readOrUndefined<Obj>(conn, ref("Pod", "api-client", "default"))) as Obj;
    const copy = await eventually(() => below("Pod", "api-client"), 60_000);
    const secretName = identitySecretName(String(pod.metadata.uid));
    // Issued once the super scheduler has placed the copy and the tenant's pod is bound to that node.
    const secret = await eventually(() => below("Secret", secretName), 60_000);
    const bound = (await readOrUndefined<Obj>(conn, ref("Pod", "api-client", "default"))) as Obj;
    const node = (bound.spec as { nodeName?: string }).nodeName;
    expect(node).toBeTruthy();

    // The token: the tenant's API server's, for the pod's service account, bound to the tenant's pod
    // and naming its node, as a kubelet's token does.
    const tokenKey = Object.keys(secret.data ?? {}).find((key) => key.startsWith("token."));
    expect(tokenKey).toBeDefined();
    const user = await tokenReview(decoded(secret, tokenKey as string));
    expect(user?.username).toBe("system:serviceaccount:default:default");
    expect(user?.extra?.["authentication.kubernetes.io/pod-name"]).toEqual(["api-client"]);
    expect(user?.extra?.["authentication.kubernetes.io/pod-uid"]).toEqual([pod.metadata.uid]);
    expect(user?.extra?.["authentication.kubernetes.io/node-name"]).toEqual([node]);
    // The tenant's CA, not the super cluster's.
    const access = await world.provisioner.access(tenant);
    expect(decoded(secret, "ca.crt")).toBe(access?.ca);
    // Owned by the pod's copy below, so the super cluster removes it with the pod.
    const owners = (secret.metadata as { ownerReferences?: { uid?: string }[] }).ownerReferences;
    expect(owners?.map((owner) => owner.uid)).toEqual([copy.metadata.uid]);

    const spec = copy.spec as {
      automountServiceAccountToken?: boolean;
      volumes?: unknown;
      containers: Obj[];
    };
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(JSON.stringify(spec.volumes)).not.toContain("serviceAccountToken");
    expect(JSON.stringify(spec.volumes)).toContain(secretName);
    const env = (spec.containers[0] as { env?: { name: string; value?: string }[] }).env ?? [];
    expect(env).toContainEqual({ name: "KUBERNETES_SERVICE_HOST", value: "10.244.255.1" });
    expect(env).toContainEqual({ name: "KUBERNETES_SERVICE_PORT", value: "443" });
  }, 120_000);

  it("is renewed when due", async () => {
    const secretName = identitySecretName(String(pod.metadata.uid));
    const before = (await below("Secret", secretName)) as Obj;
    const due = Date.parse(before.metadata.annotations?.[REFRESH_ANNOTATION] ?? "");
    // 80% of kube-api-access's 3607 s from when it was issued.
    expect(due - Date.now()).toBeGreaterThan(40 * 60_000);
    expect(due - Date.now()).toBeLessThanOrEqual(0.8 * 3607 * 1000);
    // Due now, as the syncer restarting finds it: renewed.
    await kubeRequest(world.superCluster, {
      method: "PATCH",
      path: `/api/v1/namespaces/${superNamespace(tenant, "default")}/secrets/${secretName}`,
      contentType: "application/merge-patch+json",
      body: {
        metadata: { annotations: { [REFRESH_ANNOTATION]: new Date(Date.now() - 1000).toISOString() } },
      },
    });
    await world.syncer.stop();
    await world.syncer.start();
    const renewed = await eventually(async () => {
      const current = await below("Secret", secretName);
      const next = Date.parse(current?.metadata.annotations?.[REFRESH_ANNOTATION] ?? "");
      return next > Date.now() ? current : undefined;
    }, 60_000);
    const key = Object.keys(renewed.data ?? {}).find((name) => name.startsWith("token.")) as string;
    expect(decoded(renewed, key)).not.toBe(decoded(before, key));
    expect((await tokenReview(decoded(renewed, key)))?.username).toBe(
      "system:serviceaccount:default:default",
    );
  }, 120_000);

  it("goes with the pod, and its tokens die with the tenant's pod", async () => {
    const secretName = identitySecretName(String(pod.metadata.uid));
    const secret = (await below("Secret", secretName)) as Obj;
    const token = decoded(
      secret,
      Object.keys(secret.data ?? {}).find((key) => key.startsWith("token.")) as string,
    );
    await deleteObject(world.admin[tenant] as never, ref("Pod", "api-client", "default"), {
      gracePeriodSeconds: 0,
    });
    await eventually(async () => ((await below("Secret", secretName)) ? undefined : true), 90_000);
    await eventually(async () => ((await tokenReview(token)) ? undefined : true), 30_000);
  }, 150_000);

  it("refuses a pod that names another pod's identity secret, and tells the tenant why", async () => {
    const conn = world.admin[tenant] as never;
    const victim = identitySecretName(String(pod.metadata.uid));
    await createObject(conn, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "borrower", namespace: "default" },
      spec: {
        containers: [{ name: "main", image: "x", volumeMounts: [{ name: "stolen", mountPath: "/stolen" }] }],
        volumes: [{ name: "stolen", secret: { secretName: victim } }],
      },
    } as KubeObject);
    const events = await eventually(async () => {
      const found = await listEventsFor(conn, { kind: "Pod", name: "borrower", namespace: "default" });
      return found.some((event) => event.reason === "SyncRefused") ? found : undefined;
    }, 60_000);
    expect(events.find((event) => event.reason === "SyncRefused")?.message).toContain("ring0-identity-");
    expect(await below("Pod", "borrower")).toBeUndefined();
  }, 90_000);

  it("never copies a tenant's secret under an identity secret's name", async () => {
    const name = identitySecretName("00000000-0000-0000-0000-000000000000");
    await createObject(
      world.admin[tenant] as never,
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: "default" },
        stringData: { token: "forged" },
      } as KubeObject,
    );
    await createObject(
      world.admin[tenant] as never,
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "ordinary", namespace: "default" },
        stringData: { token: "fine" },
      } as KubeObject,
    );
    await eventually(() => below("Secret", "ordinary"), 30_000);
    expect(await below("Secret", name)).toBeUndefined();
  }, 60_000);
});
