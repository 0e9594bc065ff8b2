/**
 * For integration tests only: the run's local super cluster (test/integration/super-cluster.ts) and
 * throwaway namespaces in it.
 */
import { inject } from "vitest";
import { createObject, deleteObject } from "./apply";
import { type ClusterConnection, connectCluster } from "./cluster";

export function testSuperCluster(): ClusterConnection {
  return connectCluster("super-test", { file: inject("superKubeconfig") });
}

/** A fresh namespace; the returned function deletes it. */
export async function testNamespace(
  conn: ClusterConnection,
  prefix: string,
): Promise<[string, () => Promise<void>]> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await createObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return [
    name,
    async () => void (await deleteObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name } })),
  ];
}

export async function eventually<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `condition not met within ${timeoutMs} ms${last instanceof Error ? `: ${last.message}` : ""}`,
  );
}

/** A kubeconfig for a server nothing listens on (port 9 on loopback), for unreachable-cluster tests. */
export const unreachableKubeconfig = [
  "apiVersion: v1",
  "kind: Config",
  "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]",
  "users: [{name: u, user: {token: t}}]",
  "contexts: [{name: x, context: {cluster: c, user: u}}]",
  "current-context: x",
].join("\n");
