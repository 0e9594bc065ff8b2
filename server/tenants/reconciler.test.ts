import { describe, expect, it } from "vitest";
import { FakeClock } from "@/server/controllers/clock";
import { NotYetError, type ReconcileContext, TerminalError } from "@/server/controllers/controller";
import { fakeCustomResources } from "@/server/controllers/fake-custom-resources";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { LogFields, Logger } from "@/server/logger";
import type { ControlPlaneObservation, Provisioner } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import type { DetectedFault } from "./observed";
import { createTenantReconciler, tenantFinalizer } from "./reconciler";
import { conditionOf } from "./status";
import type { TenantResource } from "./tenant-resources";

const quiet: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: (_fields: LogFields) => quiet,
};

const version = availableVersions()[0] as string;

/** A provisioner whose control plane is whatever the test says it is; it logs what was asked of it. */
function fakeProvisioner(log: string[]) {
  let observation: ControlPlaneObservation = { phase: "Starting" };
  const provisioner: Provisioner = {
    name: "local",
    async ensure(spec) {
      log.push(
        `ensure ${spec.tenant} ${spec.version}${spec.suspended ? " suspended" : ""}${spec.restart ? ` restart ${spec.restart.join(",")}` : ""}`,
      );
      return observation;
    },
    async observe() {
      return observation;
    },
    async access() {
      return observation.phase === "Running"
        ? { server: "https://127.0.0.1:6443", ca: "ca", cert: "cert", key: "key" }
        : undefined;
    },
    async destroy(tenant) {
      log.push(`destroy ${tenant}`);
    },
    async list() {
      return observation.phase === "Absent" ? [] : ["acme"];
    },
  };
  return {
    provisioner,
    set(next: ControlPlaneObservation) {
      observation = next;
    },
  };
}

function world(tenant: Partial<TenantResource> = {}) {
  const clock = new FakeClock(Date.parse("2026-11-21T10:00:00Z"));
  const resources = fakeCustomResources<TenantResource>([
    {
      apiVersion: "ring0.dev/v1alpha1",
      kind: "Tenant",
      metadata: {
        name: "acme",
        uid: "uid-acme",
        generation: 1,
        creationTimestamp: new Date(clock.now()).toISOString(),
      },
      spec: { controlPlane: { provisioner: "local", version } },
      ...tenant,
    },
  ]);
  const local = fakeProvisioner(resources.log);
  const setUps: string[] = [];
  let pending: string | undefined;
  const faults = new Map<string, DetectedFault>();
  const reconcile = createTenantReconciler({
    faults,
    // Never reached: every read and write goes to the fake store.
    superCluster: {} as ClusterConnection,
    store: resources.store,
    provisioners: { local: local.provisioner },
    defaultProvisioner: "local",
    logger: quiet,
    now: () => new Date(clock.now()),
    pollMs: 300,
    resyncMs: 60_000,
    setUp: async (_conn, object) => {
      setUps.push(object.metadata.name);
      return pending;
    },
  });
  let failures = 0;
  const run = async () => {
    const context: ReconcileContext = { signal: new AbortController().signal, logger: quiet, failures };
    try {
      const result = await reconcile("acme", context);
      failures = 0;
      return result;
    } catch (error) {
      if (!(error instanceof NotYetError)) failures++;
      throw error;
    }
  };
  return {
    clock,
    resources,
    local,
    faults,
    setUps,
    run,
    setPending(why: string | undefined) {
      pending = why;
    },
    tenant: () => resources.objects.get("acme") as TenantResource,
  };
}

const withFinalizer = { metadata: { name: "acme", finalizers: [tenantFinalizer] } };

describe("the tenant reconciler, with a fake provisioner and clock", () => {
  it("adds its finalizer first, and writes no status in that run", async () => {
    const w = world();
    await expect(w.run()).rejects.toMatchObject({ name: "NotYetError", requeueAfterMs: 0 });
    expect(w.tenant().metadata.finalizers).toEqual([tenantFinalizer]);
    expect(w.resources.statusWrites()).toBe(0);
  });

  it("goes Provisioning → Ready, with timings, Events and observedGeneration from what it saw", async () => {
    const w = world();
    await w.run().catch(() => {}); // the finalizer
    w.clock.advance(1_000);
    await expect(w.run()).rejects.toMatchObject({ name: "NotYetError", requeueAfterMs: 300 });
    expect(w.tenant().status).toMatchObject({
      phase: "Provisioning",
      observedGeneration: 1,
      provisioner: "local",
      timings: { provisioningStartedAt: "2026-11-21T10:00:01.000Z" },
    });
    expect(conditionOf(w.tenant().status, "Ready")).toMatchObject({ status: "False", reason: "Starting" });
    expect(w.resources.events.map((event) => [event.type, event.reason, event.message])).toEqual([
      ["Normal", "Provisioning", "Provisioning a dedicated control plane (local provisioner)."],
    ]);

    w.clock.advance(4_000);
    w.local.set({ phase: "Running", endpoint: "https://127.0.0.1:6443", version: `v${version}` });
    expect(await w.run()).toEqual({ requeueAfterMs: 60_000 });
    const status = w.tenant().status;
    expect(status).toMatchObject({
      phase: "Ready",
      endpoint: "https://127.0.0.1:6443",
      version: `v${version}`,
      timings: { readyAt: "2026-11-21T10:00:05.000Z", lastReadyAt: "2026-11-21T10:00:05.000Z" },
    });
    expect(conditionOf(status, "Ready")).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-11-21T10:00:05.000Z",
    });
    expect(w.setUps).toEqual(["acme"]);
    expect(w.resources.events.at(-1)).toMatchObject({
      type: "Normal",
      reason: "Ready",
      message: `The control plane serves Kubernetes v${version} and its defaults are applied 5.0 s after creation.`,
    });
  });

  it("writes nothing when a resync finds a Ready tenant unchanged, and keeps lastTransitionTime", async () => {
    const w = world(withFinalizer);
    w.local.set({ phase: "Running", version: `v${version}` });
    await w.run();
    const writes = w.resources.statusWrites();
    const readyAt = conditionOf(w.tenant().status, "Ready")?.lastTransitionTime;
    w.clock.advance(60_000);
    await w.run();
    expect(w.resources.statusWrites()).toBe(writes);
    expect(conditionOf(w.tenant().status, "Ready")?.lastTransitionTime).toBe(readyAt);
    expect(w.resources.events).toHaveLength(1);
  });

  it("reports a control plane that stops serving, and Failed with a Warning once retries did not help", async () => {
    const w = world(withFinalizer);
    w.local.set({ phase: "Running", version: `v${version}` });
    await w.run();
    w.clock.advance(10_000);
    w.local.set({ phase: "Failed", message: "etcd lost its data directory" });
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(w.run()).rejects.toThrow("etcd lost its data directory");
      expect(w.tenant().status?.phase).toBe("Provisioning");
    }
    await expect(w.run()).rejects.toThrow("etcd lost its data directory");
    expect(w.tenant().status?.phase).toBe("Failed");
    expect(conditionOf(w.tenant().status, "Ready")).toMatchObject({
      status: "False",
      reason: "ControlPlaneFailed",
      message: "etcd lost its data directory",
      lastTransitionTime: "2026-11-21T10:00:10.000Z",
    });
    expect(w.resources.events.at(-1)).toMatchObject({
      type: "Warning",
      reason: "Failed",
      message: "etcd lost its data directory",
    });
  });

  it("shows a fault the watchdog found as Degraded before healing it, then Ready with how long it took", async () => {
    const w = world(withFinalizer);
    w.local.set({ phase: "Running", version: `v${version}` });
    await w.run();
    expect(conditionOf(w.tenant().status, "Degraded")).toMatchObject({ status: "False", reason: "Healthy" });

    w.clock.advance(10_000);
    w.faults.set("acme", {
      component: "kube-apiserver",
      kind: "exited",
      message: "kube-apiserver exited (see kube-apiserver.log)",
      at: new Date(w.clock.now()),
    });
    // The restart is under way: the provisioner says Starting.
    w.local.set({ phase: "Starting", message: "Not ready yet: [-]etcd failed" });
    await expect(w.run()).rejects.toMatchObject({ name: "NotYetError" });
    const status = w.tenant().status;
    expect(status?.phase).toBe("Degraded");
    expect(conditionOf(status, "Degraded")).toMatchObject({
      status: "True",
      reason: "KubeApiserverExited",
      message: "kube-apiserver exited (see kube-apiserver.log)",
      lastTransitionTime: "2026-11-21T10:00:10.000Z",
    });
    expect(conditionOf(status, "ControlPlaneReady")).toMatchObject({
      status: "False",
      message:
        "kube-apiserver exited (see kube-apiserver.log); Ring0 is restarting it. Now: Not ready yet: [-]etcd failed",
    });
    expect(conditionOf(status, "Ready")?.status).toBe("False");
    // The defaults stay applied: they live in the tenant's etcd.
    expect(conditionOf(status, "DefaultsApplied")?.status).toBe("True");
    expect(w.resources.events.at(-1)).toMatchObject({
      type: "Warning",
      reason: "Degraded",
      message: "kube-apiserver exited (see kube-apiserver.log)",
    });

    w.clock.advance(2_500);
    await expect(w.run()).rejects.toMatchObject({ name: "NotYetError" });
    expect(w.tenant().status?.phase).toBe("Degraded");

    w.clock.advance(2_000);
    w.local.set({ phase: "Running", version: `v${version}` });
    expect(await w.run()).toEqual({ requeueAfterMs: 60_000 });
    expect(w.tenant().status?.phase).toBe("Ready");
    expect(conditionOf(w.tenant().status, "Degraded")).toMatchObject({
      status: "False",
      reason: "Recovered",
      message:
        "Serving again 4.5 s after a fault was found at 2026-11-21T10:00:10.000Z: kube-apiserver exited (see kube-apiserver.log)",
    });
    expect(w.resources.events.at(-1)).toMatchObject({ type: "Normal", reason: "Recovered" });
    expect(w.faults.size).toBe(0);
  });

  it("keeps a tenant Degraded while the restart fails, and Failed once retries did not help", async () => {
    const w = world(withFinalizer);
    w.local.set({ phase: "Running", version: `v${version}` });
    await w.run();
    w.faults.set("acme", { component: "etcd", kind: "exited", message: "etcd exited", at: new Date() });
    w.local.set({ phase: "Failed", message: "etcd exited again" });
    await expect(w.run()).rejects.toThrow("etcd exited again");
    expect(w.tenant().status?.phase).toBe("Degraded");
    await expect(w.run()).rejects.toThrow("etcd exited again");
    expect(w.tenant().status?.phase).toBe("Degraded");
    await expect(w.run()).rejects.toThrow("etcd exited again");
    expect(w.tenant().status?.phase).toBe("Failed");
  });

  it("restarts a hung component once per fault, never on a stale one, and keeps the API serving when only the controller manager is down", async () => {
    const w = world(withFinalizer);
    w.local.set({ phase: "Running", version: `v${version}` });
    await w.run();
    w.resources.log.length = 0;
    // Found 60 s ago and only now taken: stale, ignored (the watchdog reports it again if real).
    w.faults.set("acme", {
      component: "kube-apiserver",
      kind: "unresponsive",
      message: "kube-apiserver does not answer its readiness check",
      at: new Date(w.clock.now() - 60_000),
    });
    await w.run();
    expect(w.tenant().status?.phase).toBe("Ready");
    expect(w.resources.log).toEqual([`ensure acme ${version}`]);

    w.faults.set("acme", {
      component: "kube-apiserver",
      kind: "unresponsive",
      message: "kube-apiserver does not answer its readiness check",
      at: new Date(w.clock.now()),
    });
    w.local.set({ phase: "Starting", message: "Not ready yet" });
    await expect(w.run()).rejects.toMatchObject({ name: "NotYetError" });
    await expect(w.run()).rejects.toMatchObject({ name: "NotYetError" });
    expect(w.resources.log.filter((line) => line.startsWith("ensure"))).toEqual([
      `ensure acme ${version}`,
      `ensure acme ${version} restart kube-apiserver`,
      `ensure acme ${version}`,
    ]);
    expect(conditionOf(w.tenant().status, "Degraded")?.reason).toBe("KubeApiserverUnresponsive");
    expect(conditionOf(w.tenant().status, "ControlPlaneReady")?.status).toBe("False");

    w.local.set({ phase: "Running", version: `v${version}` });
    await w.run();
    w.faults.set("acme", {
      component: "kube-controller-manager",
      kind: "exited",
      message: "kube-controller-manager exited",
      at: new Date(w.clock.now()),
    });
    w.local.set({ phase: "Starting", message: "Some components are not started yet." });
    await expect(w.run()).rejects.toMatchObject({ name: "NotYetError" });
    expect(w.tenant().status?.phase).toBe("Degraded");
    // Only the controller manager: Degraded, but the API keeps serving its users.
    const status = w.tenant().status;
    expect(conditionOf(status, "Degraded")?.reason).toBe("KubeControllerManagerExited");
    expect(conditionOf(status, "ControlPlaneReady")?.status).toBe("True");
  });

  it("turns a tenant Degraded for more than five minutes Failed, still healing", async () => {
    const w = world(withFinalizer);
    w.local.set({ phase: "Running", version: `v${version}` });
    await w.run();
    w.faults.set("acme", {
      component: "etcd",
      kind: "unresponsive",
      message: "etcd does not answer the API server",
      at: new Date(w.clock.now()),
    });
    w.local.set({ phase: "Starting", message: "Not ready yet" });
    await expect(w.run()).rejects.toMatchObject({ name: "NotYetError" });
    expect(w.tenant().status?.phase).toBe("Degraded");
    w.clock.advance(6 * 60_000);
    await expect(w.run()).rejects.toMatchObject({ name: "NotYetError" });
    expect(w.tenant().status?.phase).toBe("Failed");
    expect(conditionOf(w.tenant().status, "ControlPlaneReady")).toMatchObject({ reason: "NotHealed" });
    expect(conditionOf(w.tenant().status, "Degraded")?.status).toBe("True");
    w.local.set({ phase: "Running", version: `v${version}` });
    await w.run();
    expect(w.tenant().status?.phase).toBe("Ready");
  });

  it("ignores a fault of a tenant that is not Ready (being provisioned or suspended)", async () => {
    const w = world(withFinalizer);
    w.faults.set("acme", { component: "etcd", kind: "exited", message: "etcd exited", at: new Date() });
    await expect(w.run()).rejects.toMatchObject({ name: "NotYetError" });
    expect(w.tenant().status?.phase).toBe("Provisioning");
    expect(w.faults.size).toBe(0);
  });

  it("waits on defaults still pending, then becomes Ready", async () => {
    const w = world(withFinalizer);
    w.local.set({ phase: "Running", version: `v${version}` });
    w.setPending("waiting for the default namespaces");
    await expect(w.run()).rejects.toMatchObject({
      name: "NotYetError",
      message: "waiting for the default namespaces",
    });
    expect(conditionOf(w.tenant().status, "DefaultsApplied")).toMatchObject({
      status: "False",
      reason: "Pending",
    });
    w.setPending(undefined);
    await w.run();
    expect(w.tenant().status?.phase).toBe("Ready");
  });

  it("tracks a spec change in observedGeneration", async () => {
    const w = world(withFinalizer);
    w.local.set({ phase: "Running", version: `v${version}` });
    await w.run();
    w.tenant().metadata.generation = 2;
    await w.run();
    expect(w.tenant().status?.observedGeneration).toBe(2);
    expect(conditionOf(w.tenant().status, "Ready")?.observedGeneration).toBe(2);
  });

  it("suspends: Suspended once the control plane has stopped", async () => {
    const w = world({ ...withFinalizer, spec: { controlPlane: { version }, suspend: true } });
    w.local.set({ phase: "Running", version: `v${version}` });
    await expect(w.run()).rejects.toMatchObject({ message: "stopping the control plane" });
    w.local.set({ phase: "Stopped" });
    expect(await w.run()).toEqual({ requeueAfterMs: 60_000 });
    expect(w.tenant().status?.phase).toBe("Suspended");
    expect(w.resources.log.filter((line) => line.startsWith("ensure"))).toEqual([
      `ensure acme ${version} suspended`,
      `ensure acme ${version} suspended`,
    ]);
  });

  it("fails for good when the tenant's provisioner is not enabled", async () => {
    const w = world({ ...withFinalizer, status: { provisioner: "kubernetes" } });
    await expect(w.run()).rejects.toBeInstanceOf(TerminalError);
    expect(w.tenant().status?.phase).toBe("Failed");
    expect(conditionOf(w.tenant().status, "ControlPlaneReady")).toMatchObject({
      reason: "ProvisionerUnavailable",
      message: 'The "kubernetes" provisioner is not enabled on this Ring0 (enabled: local).',
    });
  });

  it("drops the finalizer only after the control plane is destroyed, and keeps it when that fails", async () => {
    const w = world(withFinalizer);
    w.local.set({ phase: "Running", version: `v${version}` });
    await w.run();
    w.tenant().metadata.deletionTimestamp = new Date(w.clock.now()).toISOString();

    const destroy = w.local.provisioner.destroy;
    w.local.provisioner.destroy = async () => {
      throw new Error("kwokctl delete failed");
    };
    await expect(w.run()).rejects.toThrow("kwokctl delete failed");
    expect(w.tenant().status?.phase).toBe("Deleting");
    expect(w.tenant().metadata.finalizers).toEqual([tenantFinalizer]);

    w.local.provisioner.destroy = destroy;
    w.resources.log.length = 0;
    expect(await w.run()).toBeUndefined();
    expect(w.resources.log).toEqual(["destroy acme", 'patch acme {"finalizers":[]}']);
    expect(w.tenant().metadata.finalizers).toEqual([]);
  });
});
