import { describe, expect, it } from "vitest";
import { createLogger } from "@/server/logger";
import { deleteObject, serverSideApply } from "./apply";
import { installCrds } from "./crds";
import { K8sError } from "./errors";
import { testSuperCluster } from "./test-cluster";
import { kubeRequest } from "./transport";

const conn = testSuperCluster();
const logger = createLogger({}, "warn");

const tenant = (name: string, version: string) => ({
  apiVersion: "ring0.dev/v1alpha1",
  kind: "Tenant",
  metadata: { name },
  spec: {
    displayName: "Acme",
    controlPlane: { provisioner: "local", version },
    quota: { hard: { "requests.cpu": "8", "limits.memory": "32Gi", pods: "200" } },
    admins: ["alice"],
  },
});

describe("Ring0's CRDs", () => {
  it("install idempotently, validate Tenants with the API's message and default fields", async () => {
    expect(await installCrds(conn, logger)).toEqual(["sharingpolicies.ring0.dev", "tenants.ring0.dev"]);
    const crd = await kubeRequest<{ metadata: { resourceVersion: string } }>(conn, {
      path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/tenants.ring0.dev",
    });
    await installCrds(conn, logger);
    const again = await kubeRequest<{ metadata: { resourceVersion: string } }>(conn, {
      path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/tenants.ring0.dev",
    });
    expect(again.metadata.resourceVersion).toBe(crd.metadata.resourceVersion);

    const error = await serverSideApply(conn, tenant("crd-bad", "2.0")).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(K8sError);
    expect(error).toMatchObject({ status: 422, reason: "Invalid" });
    expect((error as K8sError).message).toContain('Tenant.ring0.dev "crd-bad" is invalid');
    expect((error as K8sError).message).toContain("spec.controlPlane.version");

    const badQuota = await serverSideApply(conn, {
      ...tenant("crd-bad-quota", "1.36"),
      spec: { controlPlane: { provisioner: "local", version: "1.36" }, quota: { hard: { cpu: "lots" } } },
    }).catch((thrown: unknown) => thrown);
    expect(badQuota).toMatchObject({ reason: "Invalid" });

    try {
      const applied = await serverSideApply<{
        apiVersion: string;
        kind: string;
        metadata: { name: string };
        spec: { suspend: boolean; syncer: unknown };
      }>(conn, tenant("crd-good", "1.36.4"));
      expect(applied.spec.suspend).toBe(false);
      const policy = await serverSideApply(conn, {
        apiVersion: "ring0.dev/v1alpha1",
        kind: "SharingPolicy",
        metadata: { name: "crd-share" },
        spec: {
          ownerTenant: "crd-good",
          grantees: [{ tenant: "beta", groups: ["sre"] }],
          rules: [
            {
              namespaces: ["prod"],
              apiGroups: [""],
              resources: ["pods", "pods/log"],
              verbs: ["get", "list"],
            },
          ],
          expiresAt: "2030-01-01T00:00:00Z",
          purpose: "incident 42",
        },
      });
      expect(policy.metadata.name).toBe("crd-share");
    } finally {
      await deleteObject(conn, {
        apiVersion: "ring0.dev/v1alpha1",
        kind: "Tenant",
        metadata: { name: "crd-good" },
      });
      await deleteObject(conn, {
        apiVersion: "ring0.dev/v1alpha1",
        kind: "SharingPolicy",
        metadata: { name: "crd-share" },
      });
    }
  });
});
