/**
 * The provisioning benchmark's Ring0 side, real parts throughout: a local super cluster with the
 * Tenant CRD, the tenant controller (startTenantController, runtime defaults) with the local
 * provisioner, embedded PostgreSQL for the tokens, and the gateway behind its HTTPS listener over
 * the control plane directory of the Tenant informer. A tenant is timed from creating its Tenant
 * object to `kubectl get ns` through the gateway with a tenant admin's API token, and removed
 * through the controller.
 */
import fs from "node:fs";
import path from "node:path";
import { localSuperCluster } from "@/server/cluster/local";
import { createObject, deleteObject, readObject } from "@/server/k8s/apply";
import { type ClusterConnection, connectCluster } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { isNotFound } from "@/server/k8s/errors";
import { createLocalProvisioner, localClusterName } from "@/server/provisioners/local";
import { createControlPlaneDirectory } from "@/server/tenants/control-planes";
import { startTenantController } from "@/server/tenants/controller";
import type { TenantStatus } from "@/server/tenants/status";
import {
  type TenantResource,
  tenantApiVersion,
  tenantInformer,
  tenantKind,
} from "@/server/tenants/tenant-resources";
import { type HttpsIdentity, httpsRequest, kubectl } from "../lib/clients";
import { startDatabase, tenantAdminToken } from "../lib/database";
import { startBenchGateway, writeTokenKubeconfig } from "../lib/gateway";
import { type CleanupStack, logger, waitFor } from "../lib/run";
import { type Subject, TIMEOUT_MS } from "./subjects";

const tenantRef = (name: string) => ({ apiVersion: tenantApiVersion, kind: tenantKind, metadata: { name } });

/** Ring0 with its tenant controller and gateway under `root`; `tenant(name)` makes one to time. */
export async function startRing0(
  root: string,
  cleanup: CleanupStack,
  binDir: string,
  kubectlBinary: string,
): Promise<{ tenant(name: string): Promise<Subject> }> {
  // The super cluster (Tenant objects live there) and the CRDs.
  const superCluster = localSuperCluster({ stateDir: path.join(root, "super"), logger });
  cleanup.push("super cluster down", () => superCluster.down());
  const up = await superCluster.up({ nodes: 1 });
  const conn: ClusterConnection = connectCluster("bench-super", { file: up.kubeconfig });
  await installCrds(conn, logger);

  // PostgreSQL for users, memberships and tokens.
  const database = await startDatabase(path.join(root, "pg"));
  cleanup.push("postgres stop", () => database.stop());

  // The tenant controller with the local provisioner, as the runtime starts it.
  const provisioner = createLocalProvisioner({ stateDir: path.join(root, "ring0"), logger, binDir });
  const controller = startTenantController(conn, {
    superCluster: conn,
    provisioners: { local: provisioner },
    defaultProvisioner: "local",
    logger,
  });
  // Safety net once the controller has stopped: whatever tenant control plane is left goes.
  cleanup.push("leftover tenant control planes", async () => {
    for (const tenant of await provisioner.list()) await provisioner.destroy(tenant);
  });
  cleanup.push("tenant controller stop", () => controller.stop());
  // The directory over the Tenant informer (as server/runtime/tenants.ts builds it) and the gateway.
  const informer = tenantInformer(conn);
  cleanup.push(
    "tenant informer release",
    informer.subscribe(() => {}),
  );
  const directory = createControlPlaneDirectory({
    tenants: {
      async find(tenant) {
        await informer.synced();
        return {
          resource: informer.snapshot().find((item: TenantResource) => item.metadata.name === tenant),
        };
      },
    },
    provisioners: { local: provisioner },
    defaultProvisioner: "local",
  });
  const gateway = await startBenchGateway(path.join(root, "gateway"), database.db, directory);
  cleanup.push("gateway close", () => gateway.close());

  return {
    async tenant(name) {
      const token = await tenantAdminToken(database.db, name);
      const dir = path.join(root, "kubectl", name);
      fs.mkdirSync(dir, { recursive: true });
      const server = `${gateway.url}/k8s/tenants/${name}`;
      const kubeconfig = writeTokenKubeconfig(path.join(dir, "kubeconfig"), server, gateway.ca, token);
      const identity: HttpsIdentity = { ca: gateway.ca, token };
      return {
        name,
        create: async () => {
          await createObject(conn, { ...tenantRef(name), spec: {} });
        },
        probe: async () => (await httpsRequest(`${server}/api/v1/namespaces`, identity)).status === 200,
        kubectlGetNs: async () =>
          (await kubectl(kubectlBinary, kubeconfig, path.join(dir, "cache"), ["get", "ns"])).code === 0,
        pidDir: path.join(root, "ring0", "tenants", name, "clusters", localClusterName(name), "pids"),
        phases: async () => {
          const tenant = await readObject<TenantResource>(conn, tenantRef(name));
          const timings = (tenant.status as TenantStatus | undefined)?.timings ?? {};
          const created = new Date(tenant.metadata.creationTimestamp ?? Number.NaN).getTime();
          const after = (at: string | undefined) => (at ? Date.parse(at) - created : Number.NaN);
          return {
            provisioningStarted: after(timings.provisioningStartedAt),
            controlPlaneReady: after(timings.controlPlaneReadyAt),
            ready: after(timings.readyAt),
          };
        },
        // Through the controller: the finalizer goes once the control plane is destroyed.
        remove: async () => {
          await deleteObject(conn, tenantRef(name));
          await waitFor(
            `${name} deleted`,
            async () => {
              try {
                await readObject(conn, tenantRef(name));
                return false;
              } catch (error) {
                return isNotFound(error);
              }
            },
            { timeoutMs: TIMEOUT_MS, everyMs: 200 },
          );
        },
      };
    },
  };
}
