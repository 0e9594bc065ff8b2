/**
 * A Kubernetes kind, modelled once: where its objects live in the API (the only place Ring0 spells
 * API paths) and typed list/get/informer over a connection. Each kind module under
 * server/k8s/kinds/ declares one with `defineKind` and adds what the panel shows of it.
 */
import type { ClusterConnection } from "../cluster";
import { type SharedInformer, sharedInformer } from "../informers";
import { kubeRequest } from "../transport";
import { groupVersionPath } from "./group-version";

export { groupVersionPath };

/** Where in a kind's API: the whole collection, one namespace's, one object, or its subresource. */
export interface KindLocation {
  namespace?: string;
  name?: string;
  /** e.g. "status", "log", "exec" (only with a name). */
  subresource?: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface KindDefinition {
  /** "v1" for the core group, else "group/version". */
  apiVersion: string;
  kind: string;
  /** The resource name in paths, e.g. "pods". */
  plural: string;
  namespaced: boolean;
}

export interface KindModel<T> extends KindDefinition {
  /** The API path of a collection, an object or a subresource (names encoded). */
  path(at?: KindLocation): string;
  list(conn: ClusterConnection, options?: ListOptions): Promise<T[]>;
  get(conn: ClusterConnection, name: string, namespace?: string, timeoutMs?: number): Promise<T>;
  /** The process-wide shared informer over the whole collection (or a label selection of it). */
  informer(conn: ClusterConnection, labelSelector?: string): SharedInformer<T>;
}

export function defineKind<T>(definition: KindDefinition): KindModel<T> {
  const base = groupVersionPath(definition.apiVersion);
  const path = (at: KindLocation = {}): string => {
    if (at.namespace !== undefined && !definition.namespaced) {
      throw new Error(`${definition.kind} is not namespaced`);
    }
    if (at.subresource && !at.name) throw new Error(`a ${definition.kind} subresource needs a name`);
    let out = base;
    if (at.namespace !== undefined) out += `/namespaces/${encodeURIComponent(at.namespace)}`;
    out += `/${definition.plural}`;
    if (at.name !== undefined) out += `/${encodeURIComponent(at.name)}`;
    if (at.subresource) out += `/${at.subresource}`;
    return out;
  };
  return {
    ...definition,
    path,
    async list(conn, options = {}) {
      const list = await kubeRequest<{ items?: T[] }>(conn, {
        path: path({ namespace: options.namespace }),
        query: {
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          limit: options.limit === undefined ? undefined : String(options.limit),
        },
        timeoutMs: options.timeoutMs,
        signal: options.signal,
      });
      return list.items ?? [];
    },
    get(conn, name, namespace, timeoutMs) {
      return kubeRequest<T>(conn, { path: path({ namespace, name }), timeoutMs });
    },
    informer(conn, labelSelector) {
      return sharedInformer<T>(conn, { path: path(), labelSelector });
    },
  };
}
