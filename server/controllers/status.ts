/**
 * Status writes for reconcilers: read the object fresh, let the reconciler rebuild its status, and
 * PUT the status subresource with the read resourceVersion; a 409 Conflict (someone wrote in
 * between) means read again and redo the mutation, a bounded number of times.
 */
import { FIELD_MANAGER } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isConflict } from "@/server/k8s/errors";
import { groupVersionPath } from "@/server/k8s/kinds/group-version";
import { kubeRequest } from "@/server/k8s/transport";

/** An object addressed by API group/version, resource (plural) and name. */
export interface ResourceRef {
  /** "v1" for the core group, else "group/version" (e.g. "ring0.dev/v1alpha1"). */
  apiVersion: string;
  /** Plural resource name, e.g. "tenants". */
  resource: string;
  namespace?: string;
  name: string;
}

export interface ObjectWithStatus<S> {
  metadata: { name: string; namespace?: string; resourceVersion?: string; [key: string]: unknown };
  status?: S;
  [key: string]: unknown;
}

/** The object's API path, e.g. /apis/ring0.dev/v1alpha1/tenants/acme. */
export function resourcePath(ref: ResourceRef): string {
  const prefix = groupVersionPath(ref.apiVersion);
  const scope = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : "";
  return `${prefix}${scope}/${ref.resource}/${encodeURIComponent(ref.name)}`;
}

/** Where status updates read and write; the cluster in production, a fake in unit tests. */
export interface StatusStore {
  read<T>(ref: ResourceRef): Promise<T>;
  /** PUT the status subresource; a stale metadata.resourceVersion is a 409 Conflict (K8sError). */
  writeStatus<T>(ref: ResourceRef, object: T): Promise<T>;
}

export function readResource<T>(conn: ClusterConnection, ref: ResourceRef, timeoutMs = 30_000): Promise<T> {
  return kubeRequest<T>(conn, { path: resourcePath(ref), timeoutMs });
}

/** PUT `object` to the status subresource (only .status is taken; metadata.resourceVersion guards it). */
export function replaceStatus<T>(
  conn: ClusterConnection,
  ref: ResourceRef,
  object: T,
  timeoutMs = 30_000,
): Promise<T> {
  return kubeRequest<T>(conn, {
    method: "PUT",
    path: `${resourcePath(ref)}/status`,
    query: { fieldManager: FIELD_MANAGER },
    body: object,
    timeoutMs,
  });
}

export function clusterStatusStore(conn: ClusterConnection): StatusStore {
  return {
    read: (ref) => readResource(conn, ref),
    writeStatus: (ref, object) => replaceStatus(conn, ref, object),
  };
}

export interface UpdateStatusOptions {
  /** Reads + writes before a Conflict is given up on (and thrown). Default 5. */
  maxAttempts?: number;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Read the object, apply `mutate` to (a copy of) its status — mutate in place or return a new one —
 * and write it back. `cluster` is a connection, or a StatusStore in unit tests. No write happens when the status did not change. Resolves the object as stored.
 */
export async function updateStatusWithRetry<
  S extends object,
  T extends ObjectWithStatus<S> = ObjectWithStatus<S>,
>(
  cluster: ClusterConnection | StatusStore,
  ref: ResourceRef,
  mutate: ((status: S, object: T) => S) | ((status: S, object: T) => void),
  options: UpdateStatusOptions = {},
): Promise<T> {
  const maxAttempts = options.maxAttempts ?? 5;
  const store = "writeStatus" in cluster ? cluster : clusterStatusStore(cluster);
  for (let attempt = 1; ; attempt++) {
    const object = await store.read<T>(ref);
    const before = (object.status ?? {}) as S;
    const draft = structuredClone(before);
    const after = (mutate(draft, object) as S | undefined) ?? draft;
    if (sameJson(before, after)) return object;
    try {
      return await store.writeStatus<T>(ref, { ...object, status: after });
    } catch (error) {
      if (!isConflict(error) || attempt >= maxAttempts) throw error;
    }
  }
}
