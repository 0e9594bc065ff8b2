import { describe, expect, it } from "vitest";
import { FakeClock } from "@/server/controllers/clock";
import {
  defaultsFailed,
  deleting,
  notServing,
  observedTenant,
  provisionerFailed,
  ready,
  serving,
  suspended,
  unsupportedVersion,
} from "./observed";
import { buildStatus, conditionOf, phaseChangeEvent, type TenantStatus } from "./status";
import type { TenantResource } from "./tenant-resources";

const tenant = (status?: TenantStatus): TenantResource => ({
  apiVersion: "ring0.dev/v1alpha1",
  kind: "Tenant",
  metadata: { name: "acme", generation: 3, creationTimestamp: "2026-11-21T09:59:58Z" },
  spec: {},
  ...(status ? { status } : {}),
});

const common = observedTenant(tenant(), "local");
const clock = () => new FakeClock(Date.parse("2026-11-21T10:00:00Z"));
const at = (c: FakeClock) => new Date(c.now());

describe("observedTenant", () => {
  it("carries the generation, the provisioner and the creation time", () => {
    expect(common).toEqual({ generation: 3, provisioner: "local", createdAt: "2026-11-21T09:59:58.000Z" });
  });
});

describe("a control plane that is not serving", () => {
  it("is Provisioning, then Failed with the provisioner's message after two failed retries", () => {
    const observation = { phase: "Failed" as const, message: "port 6443 is taken" };
    expect(notServing(tenant(), common, "1.36.4", observation, 1)).toMatchObject({
      phase: "Provisioning",
      controlPlane: { status: "False", reason: "ControlPlaneFailed", message: "port 6443 is taken" },
    });
    expect(notServing(tenant(), common, "1.36.4", observation, 2).phase).toBe("Failed");
  });

  it("is Upgrading when a control plane that was ready moves to another version", () => {
    const before = tenant({ version: "v1.35.2", timings: { readyAt: "2026-11-20T10:00:00Z" } });
    expect(notServing(before, common, "1.36.4", { phase: "Starting" }, 0)).toMatchObject({
      phase: "Upgrading",
      controlPlane: { reason: "Upgrading", message: "Moving the control plane to Kubernetes 1.36.4." },
    });
  });

  it("fails at once for an invalid spec, and only after retries for a provisioner error", () => {
    const failure = { message: "no binaries", permanent: true, failures: 0 };
    expect(provisionerFailed(tenant(), common, "1.36.4", failure)).toMatchObject({
      phase: "Failed",
      controlPlane: { reason: "InvalidSpec" },
    });
    expect(
      provisionerFailed(tenant(), common, "1.36.4", { ...failure, permanent: false }).controlPlane.reason,
    ).toBe("ProvisionerError");
    expect(provisionerFailed(tenant(), common, "1.36.4", { ...failure, permanent: false }).phase).toBe(
      "Provisioning",
    );
  });
});

describe("status from observations over time", () => {
  it("moves Provisioning → Ready → Provisioning (control plane lost) with the right transitions", () => {
    const c = clock();
    let status = buildStatus(
      undefined,
      notServing(tenant(), common, "1.36.4", { phase: "Starting" }, 0),
      at(c),
    );
    expect(status.phase).toBe("Provisioning");
    expect(status.timings?.provisioningStartedAt).toBe("2026-11-21T10:00:00.000Z");

    c.advance(3_000);
    const up = ready(serving(common, { phase: "Running", version: "v1.36.4" }, "1.36.4"));
    status = buildStatus(status, up, at(c));
    expect(status).toMatchObject({ phase: "Ready", version: "v1.36.4", observedGeneration: 3 });
    expect(conditionOf(status, "Ready")).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-11-21T10:00:03.000Z",
    });
    expect(phaseChangeEvent("Provisioning", up, status)?.message).toBe(
      "The control plane serves Kubernetes v1.36.4 and its defaults are applied 5.0 s after creation.",
    );

    c.advance(60_000);
    const same = buildStatus(status, up, at(c));
    expect(same).toEqual(status);
    expect(phaseChangeEvent("Ready", up, same)).toBeNull();

    c.advance(1_000);
    const lost = notServing(
      tenant(status),
      common,
      "1.36.4",
      { phase: "Failed", message: "the API server exited" },
      2,
    );
    status = buildStatus(status, lost, at(c));
    expect(status.phase).toBe("Failed");
    expect(conditionOf(status, "Ready")).toMatchObject({
      status: "False",
      reason: "ControlPlaneFailed",
      message: "the API server exited",
      lastTransitionTime: "2026-11-21T10:01:04.000Z",
    });
    // readyAt is the first time; lastReadyAt is not moved by a failure.
    expect(status.timings).toMatchObject({
      readyAt: "2026-11-21T10:00:03.000Z",
      lastReadyAt: "2026-11-21T10:00:03.000Z",
    });
    expect(phaseChangeEvent("Ready", lost, status)).toEqual({
      type: "Warning",
      reason: "Failed",
      message: "the API server exited",
    });
  });

  it("keeps Ready False for a refused version while the old control plane still serves", () => {
    const observed = unsupportedVersion(
      common,
      { phase: "Running", version: "v1.35.2" },
      "Kubernetes 1.99 is not available",
    );
    const status = buildStatus(undefined, observed, at(clock()));
    expect(conditionOf(status, "ControlPlaneReady")).toMatchObject({
      status: "True",
      message: "Still serving v1.35.2.",
    });
    expect(conditionOf(status, "Ready")).toMatchObject({
      status: "False",
      reason: "UnsupportedVersion",
      message: "Kubernetes 1.99 is not available",
    });
  });

  it("names the failed defaults in a Failed tenant's Event, and the control plane's state otherwise", () => {
    const running = serving(common, { phase: "Running" }, "1.36.4");
    const failed = defaultsFailed(tenant(), running, "1.36.4", { message: "forbidden", failures: 2 });
    expect(failed.phase).toBe("Failed");
    expect(phaseChangeEvent("Ready", failed, {})?.message).toBe(
      "Applying the tenant defaults failed: forbidden",
    );
    const stopping = suspended(tenant(), common, "1.36.4", { phase: "Running" });
    expect(phaseChangeEvent("Ready", stopping, {})).toMatchObject({
      type: "Normal",
      reason: "Provisioning",
    });
    expect(phaseChangeEvent(undefined, deleting(common), {})).toEqual({
      type: "Normal",
      reason: "Deleting",
      message: "The control plane and all its data are being removed.",
    });
  });
});
