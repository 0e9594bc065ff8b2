/**
 * Copying an event about a synced pod up into the tenant namespace, under the same name, about the
 * tenant's pod, with the super namespace in its message rewritten to the tenant's. The kubelet's
 * retries of a pod's identity mount while its tokens are being issued (identity-secrets) are
 * Ring0's business, not the tenant's, and stay below.
 */
import { type KubeObject, serverSideApply } from "@/server/k8s/apply";
import { syncAnnotations, syncLabels } from "./contracts";
import { superNamespace } from "./naming";
import { IDENTITY_SECRET_PREFIX } from "./pod-identity";
import type { SyncContext, TenantSession } from "./session";

export async function syncEvent(
  ctx: SyncContext,
  session: TenantSession,
  namespace: string,
  name: string,
): Promise<void> {
  const superNs = superNamespace(session.tenant, namespace);
  const below = ctx.superEvents()?.get(superNs, name);
  if (!below || isIdentityMountWait(below)) return;
  const involved = (below.involvedObject ?? {}) as { name?: string; uid?: string; fieldPath?: string };
  const pod = involved.name ? session.caches.pod.get(namespace, involved.name) : undefined;
  // Only events about the copy of this very tenant pod (not an earlier pod of the same name).
  const copy = involved.name ? ctx.superPods()?.get(superNs, involved.name) : undefined;
  if (!pod || !copy || copy.metadata.uid !== involved.uid) return;
  if (copy.metadata.annotations?.[syncAnnotations.uid] !== pod.metadata.uid) return;
  const translate = (text: unknown) =>
    typeof text === "string" ? text.split(`${superNs}/`).join(`${namespace}/`) : text;
  const event: KubeObject = {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name, namespace, labels: { [syncLabels.managed]: "true" } },
    involvedObject: {
      apiVersion: "v1",
      kind: "Pod",
      name: pod.metadata.name,
      namespace,
      uid: pod.metadata.uid,
      ...(involved.fieldPath ? { fieldPath: involved.fieldPath } : {}),
    },
  };
  for (const field of [
    "reason",
    "type",
    "count",
    "firstTimestamp",
    "lastTimestamp",
    "source",
    "eventTime",
    "action",
    "reportingComponent",
    "reportingInstance",
    "series",
  ]) {
    if (below[field] !== undefined && below[field] !== null) event[field] = below[field];
  }
  event.message = withImageHint(translate(below.message));
  await serverSideApply(session.conn, event, { force: true });
}

/**
 * The kubelet waiting for a pod's identity secret below (mounting it, or reading the root CA from
 * it into a variable): not the tenant's to see. Tenant pods cannot name such a secret themselves
 * (malformedReason refuses them), so any event that names one is about Ring0's wait.
 */
export function isIdentityMountWait(event: { [field: string]: unknown }): boolean {
  return typeof event.message === "string" && event.message.includes(`"${IDENTITY_SECRET_PREFIX}`);
}

/** The longest event message the API accepts from a strict writer (core validation's NoteLengthLimit). */
const MESSAGE_LIMIT = 1024;

/**
 * A failed image pull tells the tenant how to get the image here: nodes pull only from Ring0's
 * local registry (no public registry is reachable), so an operator pushes it. Other messages pass
 * unchanged. The result stays within the API's message limit.
 */
export function withImageHint(message: unknown): unknown {
  if (typeof message !== "string") return message;
  const failed = /^Failed to pull image "([^"]+)"/.exec(message);
  if (!failed || !/not found|failed to resolve|failed to do request|connection refused/i.test(message))
    return message;
  const hint = ` — This cluster's nodes pull images only from Ring0's local registry, which does not have "${failed[1]}". Ask your Ring0 operator to push it: \`./ring0 images push <archive>\` (an archive from \`docker save ${failed[1]}\`).`;
  const room = MESSAGE_LIMIT - hint.length;
  if (room < 80) return message;
  return (message.length > room ? `${message.slice(0, room - 1)}…` : message) + hint;
}
