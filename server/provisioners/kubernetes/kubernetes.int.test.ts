import { X509Certificate } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObject, deleteObject, type KubeObject, readObject } from "@/server/k8s/apply";
import { installCrds } from "@/server/k8s/crds";
import { isNotFound } from "@/server/k8s/errors";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { ControlPlaneSpecError } from "../types";
import { createKubernetesProvisioner } from ".";

const conn = testSuperCluster();
// The super cluster runs the binaries Ring0 built, so its version is the one Ring0 has.
let version = "";
let minor = "";
const provisioner = createKubernetesProvisioner({
  superCluster: conn,
  logger: createLogger({}, "warn"),
  availableVersions: () => [version],
});
const tenant = `kp-${Math.random().toString(36).slice(2, 8)}`;
const racingTenant = `${tenant}-race`;
const namespace = `ring0-cp-${tenant}`;

type Workload = KubeObject & {
  spec: { replicas: number; template: { spec: { containers: { image: string; args?: string[] }[] } } };
};
type Secret = KubeObject & { data: Record<string, string> };
type Service = KubeObject & { spec: { clusterIP: string } };

const read = <T extends KubeObject>(apiVersion: string, kind: string, name: string) =>
  readObject<T>(conn, { apiVersion, kind, metadata: { name, namespace } });
const caOf = async () => (await read<Secret>("v1", "Secret", "control-plane-pki")).data["ca.crt"];

beforeAll(async () => {
  const { gitVersion } = await kubeRequest<{ gitVersion: string }>(conn, { path: "/version" });
  version = gitVersion.replace(/^v/, "").replace(/[-+].*$/, "");
  minor = version.split(".").slice(0, 2).join(".");
});

afterAll(async () => {
  await Promise.all([provisioner.destroy(tenant), provisioner.destroy(racingTenant)]);
}, 150_000);

describe("the kubernetes provisioner on the local super cluster", () => {
  it("creates the control plane's objects in the tenant's namespace", async () => {
    const observed = await provisioner.ensure({ tenant, version: minor, suspended: false });
    expect(["Starting", "Running"]).toContain(observed.phase);

    const ns = await readObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    expect(ns.metadata.labels).toMatchObject({
      "app.kubernetes.io/managed-by": "ring0",
      "ring0.dev/tenant": tenant,
    });
    const apiserver = await read<Workload>("apps/v1", "Deployment", "kube-apiserver");
    expect(apiserver.spec.replicas).toBe(1);
    expect(apiserver.spec.template.spec.containers[0]?.image).toBe(
      `registry.k8s.io/kube-apiserver:v${version}`,
    );
    expect(apiserver.metadata.managedFields?.some((field) => field.manager === "ring0")).toBe(true);
    const controllerManager = await read<Workload>("apps/v1", "Deployment", "kube-controller-manager");
    expect(controllerManager.spec.template.spec.containers[0]?.image).toBe(
      `registry.k8s.io/kube-controller-manager:v${version}`,
    );
    expect((await read<Workload>("apps/v1", "StatefulSet", "etcd")).spec.replicas).toBe(1);
    expect(await read("v1", "Service", "kube-apiserver")).toMatchObject({
      spec: { ports: [{ port: 6443 }] },
    });
    expect(await read("v1", "Service", "etcd")).toMatchObject({ spec: { clusterIP: "None" } });
    const apiserverIp = (await read<Service>("v1", "Service", "kube-apiserver")).spec.clusterIP;
    const etcdIp = (await read<Service>("v1", "Service", "etcd-client")).spec.clusterIP;
    expect(apiserverIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    // The API server dials etcd at its client Service's cluster IP, which etcd's certificate names.
    expect(apiserver.spec.template.spec.containers[0]?.args).toContain(
      `--etcd-servers=https://${etcdIp}:2379`,
    );
    const pki = (await read<Secret>("v1", "Secret", "control-plane-pki")).data;
    const serving = (file: string) => new X509Certificate(Buffer.from(pki[file] ?? "", "base64").toString());
    expect(serving("apiserver.crt").subjectAltName).toContain(`IP Address:${apiserverIp}`);
    expect(serving("etcd-server.crt").subjectAltName).toContain(`IP Address:${etcdIp}`);
    const kubeconfigs = await read<Secret>("v1", "Secret", "control-plane-kubeconfigs");
    expect(Object.keys(kubeconfigs.data).sort()).toEqual(["admin.conf", "controller-manager.conf"]);

    const access = await provisioner.access(tenant);
    expect(access?.server).toBe(`https://${apiserverIp}:6443`);
    expect(access?.podEndpoint).toEqual({ host: apiserverIp, port: 6443 });
    const ca = new X509Certificate(access?.ca ?? "");
    const admin = new X509Certificate(access?.cert ?? "");
    expect(admin.verify(ca.publicKey)).toBe(true);
    expect(admin.subject).toContain("O=system:masters");
  });

  it("reports Running once kwok marks the pods ready", { timeout: 90_000 }, async () => {
    const running = await eventually(async () => {
      const observed = await provisioner.observe(tenant);
      return observed.phase === "Running" ? observed : undefined;
    }, 60_000);
    const { clusterIP } = (await read<Service>("v1", "Service", "kube-apiserver")).spec;
    expect(running).toEqual({
      phase: "Running",
      endpoint: `https://${clusterIP}:6443`,
      version: `v${version}`,
    });
  });

  it("keeps the PKI on a second ensure", async () => {
    const before = await read<Secret>("v1", "Secret", "control-plane-pki");
    await provisioner.ensure({ tenant, version, suspended: false });
    const after = await read<Secret>("v1", "Secret", "control-plane-pki");
    expect(after.data["ca.crt"]).toBe(before.data["ca.crt"]);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it("suspends to zero replicas and resumes", { timeout: 150_000 }, async () => {
    const ca = await caOf();
    await provisioner.ensure({ tenant, version, suspended: true });
    expect((await read<Workload>("apps/v1", "Deployment", "kube-apiserver")).spec.replicas).toBe(0);
    expect((await read<Workload>("apps/v1", "Deployment", "kube-controller-manager")).spec.replicas).toBe(0);
    // etcd's data is an emptyDir on kwok nodes: its pod stays so the data does.
    expect((await read<Workload>("apps/v1", "StatefulSet", "etcd")).spec.replicas).toBe(1);
    await eventually(async () => (await provisioner.observe(tenant)).phase === "Stopped", 60_000);

    await provisioner.ensure({ tenant, version, suspended: false });
    expect((await read<Workload>("apps/v1", "Deployment", "kube-apiserver")).spec.replicas).toBe(1);
    await eventually(async () => (await provisioner.observe(tenant)).phase === "Running", 60_000);
    expect(await caOf()).toBe(ca);
  });

  it("refuses a version Ring0 has no binaries for", async () => {
    await expect(provisioner.ensure({ tenant, version: "1.20", suspended: false })).rejects.toBeInstanceOf(
      ControlPlaneSpecError,
    );
    // Nothing changed.
    const apiserver = await read<Workload>("apps/v1", "Deployment", "kube-apiserver");
    expect(apiserver.spec.template.spec.containers[0]?.image).toBe(
      `registry.k8s.io/kube-apiserver:v${version}`,
    );
  });

  it("lists the tenant", async () => {
    expect(await provisioner.list()).toContain(tenant);
  });

  it("destroys the namespace, and again is a no-op", { timeout: 120_000 }, async () => {
    await provisioner.destroy(tenant);
    await eventually(async () => {
      try {
        await readObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
        return undefined;
      } catch (error) {
        return isNotFound(error) ? true : undefined;
      }
    }, 60_000);
    expect(await provisioner.observe(tenant)).toEqual({ phase: "Absent" });
    expect(await provisioner.access(tenant)).toBeUndefined();
    expect(await provisioner.list()).not.toContain(tenant);
    await provisioner.destroy(tenant);
  });

  it("agrees on one CA when two ensures race on a new tenant", { timeout: 120_000 }, async () => {
    await Promise.all([
      provisioner.ensure({ tenant: racingTenant, version, suspended: false }),
      provisioner.ensure({ tenant: racingTenant, version, suspended: false }),
    ]);
    const stored = await readObject<Secret>(conn, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "control-plane-pki", namespace: `ring0-cp-${racingTenant}` },
    });
    const access = await provisioner.access(racingTenant);
    expect(Buffer.from(stored.data["ca.crt"] ?? "", "base64").toString()).toBe(access?.ca);
    const admin = new X509Certificate(access?.cert ?? "");
    expect(admin.verify(new X509Certificate(access?.ca ?? "").publicKey)).toBe(true);
    await provisioner.destroy(racingTenant);
    expect(await provisioner.observe(racingTenant)).toEqual({ phase: "Absent" });
  });

  it("claims etcd's volume as the Tenant asks, and keeps the claim its etcd was made with", {
    timeout: 120_000,
  }, async () => {
    const claimed = `${tenant}-pvc`;
    const claimOf = async () => {
      const etcd = await readObject<
        KubeObject & {
          spec: {
            volumeClaimTemplates?: {
              spec: { storageClassName?: string; resources: { requests: { storage: string } } };
            }[];
          };
        }
      >(conn, {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "etcd", namespace: `ring0-cp-${claimed}` },
      });
      const claim = etcd.spec.volumeClaimTemplates?.[0]?.spec;
      return claim ? [claim.resources.requests.storage, claim.storageClassName] : undefined;
    };
    try {
      await provisioner.ensure({
        tenant: claimed,
        version,
        suspended: false,
        storage: { size: "3Gi", storageClassName: "fast-ssd" },
      });
      expect(await claimOf()).toEqual(["3Gi", "fast-ssd"]);
      // A claim template cannot change: another ask (or another operator default) leaves it as made.
      await provisioner.ensure({ tenant: claimed, version, suspended: false, storage: { size: "5Gi" } });
      expect(await claimOf()).toEqual(["3Gi", "fast-ssd"]);
      // Suspended, an etcd on a claim scales to 0 too (its data is on the volume).
      await provisioner.ensure({ tenant: claimed, version, suspended: true });
      expect(
        (
          await readObject<Workload>(conn, {
            apiVersion: "apps/v1",
            kind: "StatefulSet",
            metadata: { name: "etcd", namespace: `ring0-cp-${claimed}` },
          })
        ).spec.replicas,
      ).toBe(0);
    } finally {
      await provisioner.destroy(claimed);
    }
  });

  it("the Tenant CRD keeps spec.controlPlane.storage as first set: no change, addition or removal", async () => {
    await installCrds(conn, createLogger({}, "warn"));
    const name = `${tenant}-crd`;
    const path = `/apis/ring0.dev/v1alpha1/tenants/${name}`;
    const patch = (body: object) =>
      kubeRequest(conn, { method: "PATCH", path, contentType: "application/merge-patch+json", body }).then(
        () => "accepted",
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
    await createObject(conn, {
      apiVersion: "ring0.dev/v1alpha1",
      kind: "Tenant",
      metadata: { name },
      spec: { suspend: true, controlPlane: { provisioner: "kubernetes", storage: { size: "1Gi" } } },
    });
    try {
      const refusal = /storage cannot be added, changed or removed once set/;
      expect(await patch({ spec: { controlPlane: { storage: { size: "5Gi" } } } })).toMatch(refusal);
      expect(await patch({ spec: { controlPlane: { storage: null } } })).toMatch(refusal);
      expect(await patch({ spec: { controlPlane: { storage: { size: "a lot" } } } })).toMatch(/size/);
      expect(await patch({ spec: { displayName: "still editable" } })).toBe("accepted");
    } finally {
      await deleteObject(conn, { apiVersion: "ring0.dev/v1alpha1", kind: "Tenant", metadata: { name } });
      // Another suite's tenant controller may have put its finalizer on.
      await patch({ metadata: { finalizers: null } });
    }
  });

  it("observes an unknown tenant as Absent", async () => {
    expect(await provisioner.observe(`${tenant}-none`)).toEqual({ phase: "Absent" });
  });
});
