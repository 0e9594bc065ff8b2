/**
 * For integration suites that create Tenant objects as the operator: the worker's database with
 * that operator signed in (audit events reference their actor, so it must exist as a user) and
 * the run's local super cluster with Ring0's CRDs installed.
 */
import type { SessionUser } from "@/server/core/roles";
import { getDb, setDatabaseUrl } from "@/server/db/client";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { testSuperCluster } from "@/server/k8s/test-cluster";
import { createLogger } from "@/server/logger";
import { createUserRepository } from "@/server/users/repository";
import { testDatabaseUrl } from "./database";

/** Signs `operator` in (its id becomes the user's) and returns the super cluster connection. */
export async function setUpTenantSuite(operator: SessionUser): Promise<ClusterConnection> {
  setDatabaseUrl(await testDatabaseUrl());
  const user = await createUserRepository(getDb()).recordSignIn({ ...operator }, new Date());
  operator.id = user.id;
  const conn = testSuperCluster();
  await installCrds(conn, createLogger({}, "error"));
  return conn;
}
