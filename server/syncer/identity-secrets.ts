/**
 * A tenant pod's identity secret below (issue 18; the pure rules are pod-identity.ts): the tokens
 * the tenant's API server issues for the pod (TokenRequest, bound to the tenant's pod, so they die
 * with it), and the tenant's root CA. Written before the pod goes below, owned by the pod's copy
 * once it exists (the super cluster's garbage collector removes it with the pod), renewed when 80%
 * of a token's lifetime has passed (the kubelet below sees the new tokens within its sync period,
 * as it sees any secret's change).
 */
import { type KubeObject, serverSideApply } from "@/server/k8s/apply";
import { K8sError } from "@/server/k8s/errors";
import { kubeRequest } from "@/server/k8s/transport";
import { syncAnnotations, syncLabels } from "./contracts";
import { superNamespace } from "./naming";
import {
  IDENTITY_CA_KEY,
  identitySecretName,
  needsIdentity,
  refreshDue,
  tokenNamesNode,
  tokenRequest,
  tokenSources,
} from "./pod-identity";
import { type Obj, readOrNull, type SyncContext, type TenantSession, workKey } from "./session";
import type { Json } from "./synced-kinds";

/** Label on every identity secret below (so they can be listed and told from synced secrets). */
export const IDENTITY_LABEL = "ring0.dev/pod-identity";
/** When the identity secret's tokens are due for renewal (RFC 3339). */
export const REFRESH_ANNOTATION = "ring0.dev/tokens-refresh-at";

export type IdentityOutcome =
  /** The secret is there and fresh (or the pod needs none). */
  | { ok: true }
  /** The tenant's API server refused a token for a reason of the tenant's; `message` says which. */
  | { ok: false; message: string };

/**
 * How often tokens that name the node without its uid are asked for again (the API server reads the
 * vNode from its cache, which may lag a moment behind its creation): twice, 0.2 s and 0.4 s later,
 * so a tenant without its vNodes holds a worker for well under a second.
 */
const NODE_UID_RETRIES = 2;

type TokenResults = PromiseSettledResult<{ status?: { token?: string } }>[];

function allNameNode(results: TokenResults): boolean {
  return results.every(
    (result) => result.status !== "fulfilled" || tokenNamesNode(result.value.status?.token ?? ""),
  );
}

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

function isTenantRefusal(error: unknown): error is K8sError {
  return error instanceof K8sError && [400, 403, 404, 422].includes(error.status);
}

export function createIdentitySecrets(ctx: SyncContext) {
  const { clock } = ctx;

  function secretRef(session: TenantSession, pod: Obj) {
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: identitySecretName(String(pod.metadata.uid)),
        namespace: superNamespace(session.tenant, pod.metadata.namespace ?? ""),
      },
    };
  }

  async function issue(session: TenantSession, pod: Obj, below: Obj): Promise<IdentityOutcome> {
    const api = session.placement.podApi;
    if (!api) return { ok: true };
    const spec = (pod.spec ?? {}) as Json;
    const namespace = pod.metadata.namespace ?? "";
    const serviceAccount = String(spec.serviceAccountName ?? "default");
    const sources = tokenSources(spec);
    const issuedAt = clock.now();
    const data: Record<string, string> = { [IDENTITY_CA_KEY]: b64(api.ca) };
    const granted: number[] = [];
    // At most MAX_TOKEN_SOURCES (malformedReason refuses more), asked at once under one deadline.
    const ask = () =>
      Promise.allSettled(
        sources.map((source) =>
          kubeRequest<{ status?: { token?: string; expirationTimestamp?: string } }>(session.conn, {
            method: "POST",
            path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`,
            body: tokenRequest(source, { name: pod.metadata.name, uid: String(pod.metadata.uid) }),
            timeoutMs: 15_000,
          }),
        ),
      );
    let results = await ask();
    // The vNode was perhaps made a moment ago: asked again until the tokens carry its uid too.
    for (let attempt = 0; attempt < NODE_UID_RETRIES && !allNameNode(results); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
      results = await ask();
    }
    for (const [index, result] of results.entries()) {
      const source = sources[index] as (typeof sources)[number];
      if (result.status === "rejected") {
        if (!isTenantRefusal(result.reason)) throw result.reason;
        return {
          ok: false,
          message: `Ring0 could not get a token for service account ${serviceAccount} from your control plane: ${result.reason.message}`,
        };
      }
      const token = result.value.status?.token;
      if (!token) throw new Error("the tenant's API server answered a TokenRequest without a token");
      data[source.key] = b64(token);
      const expires = Date.parse(result.value.status?.expirationTimestamp ?? "");
      if (Number.isFinite(expires)) granted.push((expires - issuedAt) / 1000);
    }
    const refreshAt = refreshDue(issuedAt, sources, granted);
    const secret: KubeObject = {
      ...secretRef(session, pod),
      metadata: {
        ...secretRef(session, pod).metadata,
        labels: { [syncLabels.tenant]: session.tenant, [IDENTITY_LABEL]: "true" },
        annotations: {
          [syncAnnotations.namespace]: namespace,
          [syncAnnotations.name]: pod.metadata.name,
          [syncAnnotations.uid]: String(pod.metadata.uid),
          [REFRESH_ANNOTATION]: new Date(refreshAt).toISOString(),
        },
        ownerReferences: [
          { apiVersion: "v1", kind: "Pod", name: below.metadata.name, uid: below.metadata.uid },
        ],
      },
      type: "Opaque",
      data,
    } as KubeObject;
    await serverSideApply(ctx.superCluster, secret, { force: true });
    session.identities.set(String(pod.metadata.uid), { namespace, name: pod.metadata.name, refreshAt });
    return { ok: true };
  }

  return {
    /**
     * The pod's identity secret below, written or renewed when needed, once `below` (the pod's
     * copy) is on a node and the tenant's pod is bound to it. After a restart the secret's own
     * record of when it is due is read once.
     */
    async ensure(session: TenantSession, pod: Obj, below: Obj): Promise<IdentityOutcome> {
      if (!session.placement.podApi || !needsIdentity((pod.spec ?? {}) as Json)) return { ok: true };
      const uid = String(pod.metadata.uid);
      const known = session.identities.get(uid);
      if (known && clock.now() < known.refreshAt) return { ok: true };
      if (!known) {
        const existing = await readOrNull<Obj>(ctx.superCluster, secretRef(session, pod));
        const due = Date.parse(existing?.metadata.annotations?.[REFRESH_ANNOTATION] ?? "");
        if (existing && !Number.isNaN(due) && clock.now() < due) {
          session.identities.set(uid, {
            namespace: pod.metadata.namespace ?? "",
            name: pod.metadata.name,
            refreshAt: due,
          });
          return { ok: true };
        }
      }
      return issue(session, pod, below);
    },

    forget(session: TenantSession, uid: string | undefined): void {
      if (uid) session.identities.delete(uid);
    },

    /** Work keys of the pods whose tokens are due for renewal now (pods gone are forgotten). */
    due(session: TenantSession): string[] {
      // Without an address for the tenant's pods, nothing is renewed (their pods have no tokens).
      if (!session.placement.podApi) {
        session.identities.clear();
        return [];
      }
      const now = clock.now();
      const keys: string[] = [];
      for (const [uid, record] of session.identities) {
        if (session.caches.pod.get(record.namespace, record.name)?.metadata.uid !== uid) {
          // Gone from the tenant: its secret goes with its copy below (owner reference).
          session.identities.delete(uid);
        } else if (record.refreshAt <= now) {
          keys.push(workKey("pod", record.namespace, record.name));
        }
      }
      return keys;
    },
  };
}

export type IdentitySecrets = ReturnType<typeof createIdentitySecrets>;
