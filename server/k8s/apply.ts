/**
 * Writing Kubernetes objects. Everything Ring0 owns goes through server-side apply with the field
 * manager "ring0", so `kubectl apply`, GitOps and Ring0 can co-own objects field by field.
 */
import { type KubernetesObject, KubernetesObjectApi, PatchStrategy } from "@kubernetes/client-node";
import type { ClusterConnection } from "./cluster";
import { isNotFound, toK8sError } from "./errors";
import { kubeRequest } from "./transport";

export const FIELD_MANAGER = "ring0";

/** Any Kubernetes object as plain JSON (apiVersion, kind, metadata.name are required to apply). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
    uid?: string;
    generation?: number;
    creationTimestamp?: string | Date;
    deletionTimestamp?: string | Date;
    finalizers?: string[];
    managedFields?: { manager?: string; operation?: string; subresource?: string }[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

// One discovery-caching client per kubeconfig.
const clients = new WeakMap<object, KubernetesObjectApi>();

function objectApi(conn: ClusterConnection): KubernetesObjectApi {
  let client = clients.get(conn.kubeConfig);
  if (!client) {
    client = KubernetesObjectApi.makeApiClient(conn.kubeConfig);
    clients.set(conn.kubeConfig, client);
  }
  return client;
}

async function call<T>(
  conn: ClusterConnection,
  request: (client: KubernetesObjectApi) => Promise<T>,
): Promise<T> {
  try {
    return await request(objectApi(conn));
  } catch (error) {
    throw toK8sError(error, conn.server);
  }
}

/** Plain JSON: client-node returns class instances with Date fields. */
function plain<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function validateManifest(manifest: KubeObject): void {
  if (!manifest.apiVersion || !manifest.kind || !manifest.metadata?.name) {
    throw new TypeError("a manifest needs apiVersion, kind and metadata.name to be applied");
  }
}

/**
 * Server-side apply `manifest` as field manager "ring0" and return the object as stored. `force`
 * takes over fields another manager owns (Ring0's own objects), instead of a 409 Conflict.
 */
export async function serverSideApply<T extends KubeObject = KubeObject>(
  conn: ClusterConnection,
  manifest: KubeObject,
  options: {
    force?: boolean;
    dryRun?: boolean;
    /**
     * The object's own path (`/apis/<group>/<version>/namespaces/<ns>/<resource>/<name>`). Given, the
     * body is sent exactly as written; otherwise client-node serialises it through its typed model
     * of the kind, which drops fields its model renames (NetworkPolicy's `from` is `_from` there).
     */
    path?: string;
  } = {},
): Promise<T> {
  validateManifest(manifest);
  // Apply bodies must not carry server-owned metadata.
  const {
    resourceVersion: _rv,
    uid: _uid,
    managedFields: _mf,
    creationTimestamp: _ct,
    ...metadata
  } = manifest.metadata;
  const body = { ...manifest, metadata } as KubernetesObject;
  if (options.path) {
    return kubeRequest<T>(conn, {
      method: "PATCH",
      path: options.path,
      query: {
        fieldManager: FIELD_MANAGER,
        ...(options.force ? { force: "true" } : {}),
        ...(options.dryRun ? { dryRun: "All" } : {}),
      },
      contentType: "application/apply-patch+yaml",
      body,
      timeoutMs: 30_000,
    });
  }
  const applied = await call(conn, (client) =>
    client.patch(
      body,
      undefined,
      options.dryRun ? "All" : undefined,
      FIELD_MANAGER,
      options.force ?? false,
      PatchStrategy.ServerSideApply,
    ),
  );
  return plain<T>(applied);
}

export async function createObject<T extends KubeObject = KubeObject>(
  conn: ClusterConnection,
  manifest: KubeObject,
): Promise<T> {
  validateManifest(manifest);
  return plain<T>(
    await call(conn, (client) =>
      client.create(manifest as KubernetesObject, undefined, undefined, FIELD_MANAGER),
    ),
  );
}

/** Replace (PUT) with optimistic concurrency: a stale metadata.resourceVersion is a 409 Conflict. */
export async function replaceObject<T extends KubeObject = KubeObject>(
  conn: ClusterConnection,
  manifest: KubeObject,
): Promise<T> {
  validateManifest(manifest);
  return plain<T>(
    await call(conn, (client) =>
      client.replace(manifest as KubernetesObject, undefined, undefined, FIELD_MANAGER),
    ),
  );
}

export async function readObject<T extends KubeObject = KubeObject>(
  conn: ClusterConnection,
  ref: ObjectRef,
): Promise<T> {
  const header = { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { ...ref.metadata } };
  return plain<T>(
    await call(conn, (client) => client.read(header as Parameters<KubernetesObjectApi["read"]>[0])),
  );
}

/** Delete; an object that is already gone is fine. Resolves whether this call deleted something. */
export async function deleteObject(
  conn: ClusterConnection,
  ref: ObjectRef,
  options: { propagationPolicy?: "Foreground" | "Background" | "Orphan"; gracePeriodSeconds?: number } = {},
): Promise<boolean> {
  try {
    await call(conn, (client) =>
      client.delete(
        ref as KubernetesObject,
        undefined,
        undefined,
        options.gracePeriodSeconds,
        undefined,
        options.propagationPolicy ?? "Background",
      ),
    );
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}
