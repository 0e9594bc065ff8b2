/**
 * For integration suites that let the run's local super cluster stand in for a tenant's control
 * plane: its admin access in the shape a provisioner hands out, and the tenant admin who uses it.
 */
import fs from "node:fs";
import type { SessionUser } from "@/server/core/roles";
import type { PrismaClient } from "@/server/db/client";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { ControlPlaneAccess } from "@/server/provisioners/types";
import { createUserRepository } from "@/server/users/repository";

/** The super cluster's admin access, as a provisioner would hand it out. */
export function superClusterAccess(conn: ClusterConnection): ControlPlaneAccess {
  const cluster = conn.kubeConfig.getCurrentCluster();
  const user = conn.kubeConfig.getCurrentUser();
  const pem = (data: string | undefined, file: string | undefined) =>
    data ? Buffer.from(data, "base64").toString("utf8") : fs.readFileSync(file as string, "utf8");
  return {
    server: conn.server,
    ca: pem(cluster?.caData, cluster?.caFile),
    cert: pem(user?.certData, user?.certFile),
    key: pem(user?.keyData, user?.keyFile),
  };
}

/** `<tenant>-admin` signed in as the IAM would sign them in (user and membership upserted). */
export async function signInTenantAdmin(db: PrismaClient, tenant: string): Promise<SessionUser> {
  const identity = {
    subject: `${tenant}:${tenant}-admin`,
    tenant,
    name: `Admin of ${tenant}`,
    role: "tenant-admin" as const,
    email: null,
  };
  const user = await createUserRepository(db).recordSignIn(identity, new Date());
  return { ...identity, id: user.id };
}
