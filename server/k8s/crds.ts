/**
 * Ring0's CustomResourceDefinitions (deploy/helm/ring0/crds/*.yaml, where the Helm chart installs them from too): applied with server-side apply as field
 * manager "ring0" and waited on until Established. Safe to run at every start-up.
 */

import fs from "node:fs/promises";
import path from "node:path";
import { loadAllYaml } from "@kubernetes/client-node";
import type { Logger } from "@/server/logger";
import { type KubeObject, serverSideApply } from "./apply";
import type { ClusterConnection } from "./cluster";
import { K8sError } from "./errors";
import { CustomResourceDefinitionKind } from "./kinds/cluster-kinds";
import { groupVersionPath } from "./kinds/group-version";
import { kubeRequest } from "./transport";

export const CRD_DIRECTORY = path.join(process.cwd(), "deploy", "helm", "ring0", "crds");

interface CrdStatus {
  spec?: { group?: string; names?: { kind?: string }; versions?: { name: string; served?: boolean }[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

export async function readCrdManifests(directory = CRD_DIRECTORY): Promise<KubeObject[]> {
  const files = (await fs.readdir(directory)).filter((file) => /\.ya?ml$/.test(file)).sort();
  const manifests: KubeObject[] = [];
  for (const file of files) {
    const documents = loadAllYaml(
      await fs.readFile(path.join(directory, file), "utf8"),
    ) as (KubeObject | null)[];
    for (const document of documents) {
      if (!document) continue;
      if (document.kind !== "CustomResourceDefinition") {
        throw new Error(
          `${path.join(directory, file)}: expected CustomResourceDefinition, found ${document.kind}`,
        );
      }
      manifests.push(document);
    }
  }
  return manifests;
}

async function discoverable(conn: ClusterConnection, crd: CrdStatus): Promise<boolean> {
  const group = crd.spec?.group;
  const kind = crd.spec?.names?.kind;
  const versions = (crd.spec?.versions ?? []).filter((version) => version.served !== false);
  if (!group || !kind) return true;
  for (const version of versions) {
    const list = await kubeRequest<{ resources?: Array<{ kind?: string }> }>(conn, {
      path: groupVersionPath(`${group}/${version.name}`),
      timeoutMs: 10_000,
    }).catch(() => undefined);
    if (!list?.resources?.some((resource) => resource.kind === kind)) return false;
  }
  return true;
}

async function waitEstablished(conn: ClusterConnection, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no conditions yet";
  while (Date.now() < deadline) {
    const crd = await kubeRequest<CrdStatus>(conn, {
      path: CustomResourceDefinitionKind.path({ name }),
      timeoutMs: 10_000,
    });
    const conditions = crd.status?.conditions ?? [];
    const established = conditions.find((condition) => condition.type === "Established");
    if (established?.status === "True") {
      // Established is not yet discoverable: clients that map a kind to its resource through
      // discovery (client-node's object API) fail until /apis/<group>/<version> lists it.
      if (await discoverable(conn, crd)) return;
      last = "Established, not yet in discovery";
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    const namesAccepted = conditions.find((condition) => condition.type === "NamesAccepted");
    if (namesAccepted?.status === "False") {
      throw new K8sError({
        status: 0,
        reason: "Invalid",
        message: `CRD ${name}: ${namesAccepted.message ?? "names not accepted"}`,
      });
    }
    last = conditions.map((condition) => `${condition.type}=${condition.status}`).join(", ") || last;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new K8sError({
    status: 0,
    reason: "Timeout",
    message: `CRD ${name} was not Established within ${Math.round(timeoutMs / 1000)} s (${last})`,
  });
}

/** Apply every CRD in deploy/helm/ring0/crds and wait until each is Established (bounded). Idempotent. */
export async function installCrds(
  conn: ClusterConnection,
  logger: Logger,
  options: { directory?: string; timeoutMs?: number } = {},
): Promise<string[]> {
  const manifests = await readCrdManifests(options.directory);
  const names: string[] = [];
  for (const manifest of manifests) {
    // force: Ring0 owns its CRDs, even fields an earlier `kubectl apply` set.
    await serverSideApply(conn, manifest, { force: true });
    names.push(manifest.metadata.name);
  }
  await Promise.all(names.map((name) => waitEstablished(conn, name, options.timeoutMs ?? 30_000)));
  logger.info("Ring0 CRDs installed", { crds: names, server: conn.server });
  return names;
}
