/**
 * The gateway benchmark's world: one tenant control plane of the local provisioner (etcd,
 * kube-apiserver, kube-controller-manager on 127.0.0.1) with the tenant defaults applied, so the
 * gateway's impersonated tenant admin is authorised by the tenant's own RBAC; embedded PostgreSQL
 * for real token verification; and createKubeGateway behind its HTTPS listener with Ring0's own
 * CA, the directory over a Ready Tenant object (no super cluster needed), sharing decided from one
 * live SharingPolicy grant to a member of another tenant.
 */
import type https from "node:https";
import path from "node:path";
import type { PrismaClient } from "@/server/db/client";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { createLocalProvisioner } from "@/server/provisioners/local";
import type { ControlPlaneAccess } from "@/server/provisioners/types";
import { granteeVerdict } from "@/server/sharing/access";
import { specHash } from "@/server/sharing/grants";
import { grantName } from "@/server/sharing/resources";
import { type SharingPolicyResource, type SharingSpec, sharingAnnotations } from "@/server/sharing/types";
import { createControlPlaneDirectory } from "@/server/tenants/control-planes";
import type { TenantResource } from "@/server/tenants/tenant-resources";
import { type HttpsIdentity, httpsAgent } from "../lib/clients";
import { startDatabase, tenantAdminToken } from "../lib/database";
import { type BenchGateway, startBenchGateway } from "../lib/gateway";
import { type CleanupStack, logger } from "../lib/run";
import { startBenchTenant } from "../lib/tenants";

export const granteeTenant = "bench-grantee";
export const sharedNamespace = "shared";

/** Where requests go and as whom. */
export interface Target {
  base: string;
  identity: HttpsIdentity;
}

/** Through the gateway with a tenant admin's token, or straight to the API server as its admin. */
export type Arm = "gateway" | "direct";

/** The two arms alternating which goes first, so both see the same load. */
export const order = (i: number): Arm[] => (i % 2 === 0 ? ["gateway", "direct"] : ["direct", "gateway"]);

export interface GatewayWorld {
  tenant: string;
  access: ControlPlaneAccess;
  /** The tenant control plane as its admin. */
  conn: ClusterConnection;
  db: PrismaClient;
  /** The tenant admin's API token, and the grantee's (a member of `granteeTenant`). */
  token: string;
  granteeToken: string;
  gateway: BenchGateway;
  grant: SharingPolicyResource;
  arms: Record<Arm, Target>;
  /** One keep-alive connection per arm. */
  agents: Record<Arm, https.Agent>;
}

/**
 * A SharingPolicy as Ring0 writes it once approved: `owner` lets every user of `grantee` get, list
 * and watch pods in the shared namespace for a day (within the default operator policy's 90 days).
 */
function benchGrant(owner: string, grantee: string): SharingPolicyResource {
  const spec: SharingSpec = {
    ownerTenant: owner,
    grantees: [{ tenant: grantee }],
    rules: [
      {
        namespaces: [sharedNamespace],
        apiGroups: [""],
        resources: ["pods"],
        verbs: ["get", "list", "watch"],
      },
    ],
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    purpose: "gateway benchmark: a grantee reads the owner's pods",
  };
  return {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "SharingPolicy",
    metadata: {
      name: grantName(owner, "bench-pods"),
      annotations: {
        [sharingAnnotations.approvedSpec]: specHash(spec),
        [sharingAnnotations.approvedBy]: "bench",
      },
    },
    spec,
  };
}

export async function startGatewayWorld(
  root: string,
  cleanup: CleanupStack,
  binDir: string,
): Promise<GatewayWorld> {
  const tenant = `gwb${Date.now().toString(36).slice(-4)}`;

  // The tenant control plane, as the tenant reconciler would bring it up (defaults included).
  const provisioner = createLocalProvisioner({ stateDir: path.join(root, "ring0"), logger, binDir });
  cleanup.push("tenant control plane destroy", () => provisioner.destroy(tenant));
  const { access, conn } = await startBenchTenant(provisioner, tenant);

  const database = await startDatabase(path.join(root, "pg"));
  cleanup.push("postgres stop", () => database.stop());
  const token = await tenantAdminToken(database.db, tenant);
  const granteeToken = await tenantAdminToken(database.db, granteeTenant, "tenant-member");

  // The real directory over a Tenant object that is Ready on the local provisioner.
  const resource = {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "Tenant",
    metadata: { name: tenant },
    spec: {},
    status: {
      phase: "Ready",
      provisioner: "local",
      endpoint: access.server,
      conditions: [{ type: "ControlPlaneReady", status: "True", reason: "Running" }],
    },
  } as unknown as TenantResource;
  const directory = createControlPlaneDirectory({
    tenants: { find: async (name) => ({ resource: name === tenant ? resource : undefined }) },
    provisioners: { local: provisioner },
    defaultProvisioner: "local",
  });
  // Sharing decided as the runtime decides it, from this one grant instead of the informer's.
  const grant = benchGrant(tenant, granteeTenant);
  const gateway = await startBenchGateway(path.join(root, "gateway"), database.db, directory, {
    sharing: {
      verdict: (user, owner, attributes) => granteeVerdict(user, owner, attributes, [grant]),
      watch: () => () => {},
      recordUse: () => {},
    },
  });
  cleanup.push("gateway close", () => gateway.close());

  const arms = {
    gateway: { base: `${gateway.url}/k8s/tenants/${tenant}`, identity: { ca: gateway.ca, token } },
    direct: { base: access.server, identity: { ca: access.ca, cert: access.cert, key: access.key } },
  };
  const agents = {
    gateway: httpsAgent(arms.gateway.identity, true),
    direct: httpsAgent(arms.direct.identity, true),
  };
  cleanup.push("agents", () => {
    agents.gateway.destroy();
    agents.direct.destroy();
  });
  return { tenant, access, conn, db: database.db, token, granteeToken, gateway, grant, arms, agents };
}
