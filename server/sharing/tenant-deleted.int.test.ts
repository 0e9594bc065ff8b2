/**
 * A deleted tenant's grants on the run's local super cluster: the grants it owns and the grants to
 * it are revoked; another tenants' grant is not; an already revoked grant keeps its revocation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObject, deleteObject, readObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { testSuperCluster } from "@/server/k8s/test-cluster";
import { createLogger } from "@/server/logger";
import { revokeGrantsOfDeletedTenant, tenantDeletedRevoker } from "./tenant-deleted";
import {
  type SharingPolicyResource,
  type SharingSpec,
  sharingAnnotations,
  sharingApiVersion,
  sharingKind,
} from "./types";

const suffix = Date.now().toString(36).slice(-5);
const deleted = `tdd-${suffix}`;
const other = `tdo-${suffix}`;
const third = `tdt-${suffix}`;
const created: string[] = [];
let superCluster: ClusterConnection;

const ref = (name: string) => ({ apiVersion: sharingApiVersion, kind: sharingKind, metadata: { name } });

async function createGrant(
  name: string,
  owner: string,
  grantee: string,
  annotations: Record<string, string> = {},
): Promise<void> {
  created.push(name);
  const spec: SharingSpec = {
    ownerTenant: owner,
    grantees: [{ tenant: grantee }],
    rules: [{ namespaces: ["shared"], apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
    purpose: "tenant deletion test",
  };
  await createObject(superCluster, { ...ref(name), metadata: { name, annotations }, spec });
}

const annotationsOf = async (name: string) =>
  (await readObject<SharingPolicyResource>(superCluster, ref(name))).metadata.annotations ?? {};

beforeAll(async () => {
  superCluster = testSuperCluster();
  await installCrds(superCluster, createLogger({ service: "tenant-deleted-it" }, "error"));
});

afterAll(async () => {
  for (const name of created) await deleteObject(superCluster, ref(name)).catch(() => undefined);
});

describe("revokeGrantsOfDeletedTenant", () => {
  it("revokes the grants the deleted tenant owns or receives, and no other", async () => {
    await createGrant(`${deleted}.owned`, deleted, other);
    await createGrant(`${other}.to-deleted`, other, deleted);
    await createGrant(`${other}.unrelated`, other, third);
    await createGrant(`${third}.already`, third, deleted, {
      [sharingAnnotations.revokedAt]: "2026-01-01T00:00:00.000Z",
      [sharingAnnotations.revokedBy]: "ada",
    });
    const now = new Date("2026-06-01T12:00:00.000Z");

    const revoked = await revokeGrantsOfDeletedTenant(superCluster, deleted, now);

    expect(revoked.sort()).toEqual([`${deleted}.owned`, `${other}.to-deleted`].sort());
    for (const name of [`${deleted}.owned`, `${other}.to-deleted`]) {
      const annotations = await annotationsOf(name);
      expect(annotations[sharingAnnotations.revokedAt]).toBe(now.toISOString());
      expect(annotations[sharingAnnotations.revokedBy]).toBe(tenantDeletedRevoker(deleted));
      expect(tenantDeletedRevoker(deleted)).toBe(`Ring0 (tenant ${deleted} deleted)`);
    }
    expect((await annotationsOf(`${other}.unrelated`))[sharingAnnotations.revokedAt]).toBeUndefined();
    const already = await annotationsOf(`${third}.already`);
    expect(already[sharingAnnotations.revokedAt]).toBe("2026-01-01T00:00:00.000Z");
    expect(already[sharingAnnotations.revokedBy]).toBe("ada");

    // Again: nothing left to revoke.
    expect(await revokeGrantsOfDeletedTenant(superCluster, deleted, now)).toEqual([]);
  });
});
