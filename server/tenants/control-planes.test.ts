import { describe, expect, it } from "vitest";
import type { ControlPlaneAccess } from "@/server/provisioners/types";
import { createControlPlaneDirectory } from "./control-planes";
import type { TenantResource } from "./tenant-resources";

const access: ControlPlaneAccess = { server: "https://127.0.0.1:1", ca: "ca", cert: "cert", key: "key" };
const tenant = (name: string, patch: Partial<TenantResource> = {}): TenantResource => ({
  apiVersion: "ring0.dev/v1alpha1",
  kind: "Tenant",
  metadata: { name },
  spec: {},
  status: {
    phase: "Ready",
    provisioner: "local",
    endpoint: access.server,
    conditions: [
      { type: "ControlPlaneReady", status: "True", reason: "Running", message: "", lastTransitionTime: "" },
      { type: "Ready", status: "True", reason: "Ready", message: "", lastTransitionTime: "" },
    ],
  },
  ...patch,
});

function directoryWith(resources: TenantResource[], calls: string[] = []) {
  return createControlPlaneDirectory({
    tenants: {
      find: async (name) => ({ resource: resources.find((resource) => resource.metadata.name === name) }),
    },
    provisioners: {
      local: {
        access: async (name) => {
          calls.push(name);
          return access;
        },
      },
    },
    defaultProvisioner: "local",
  });
}

describe("control plane directory", () => {
  it("serves a tenant whose control plane is ready, reusing access within its TTL", async () => {
    const calls: string[] = [];
    const directory = directoryWith([tenant("acme")], calls);
    expect(await directory.lookup("acme")).toEqual({ state: "ready", access, version: undefined });
    await directory.lookup("acme");
    expect(calls).toEqual(["acme"]);
  });

  it("says absent for unknown tenants and unavailable (with why) for suspended, deleting and starting ones", async () => {
    const directory = directoryWith([
      tenant("sleepy", { spec: { suspend: true } }),
      tenant("going", { metadata: { name: "going", deletionTimestamp: "2026-11-21T00:00:00Z" } }),
      tenant("young", { status: { phase: "Provisioning", conditions: [] } }),
    ]);
    expect(await directory.lookup("nobody")).toEqual({ state: "absent" });
    expect(await directory.lookup("sleepy")).toMatchObject({ state: "unavailable", phase: "Suspended" });
    expect(await directory.lookup("going")).toMatchObject({ state: "unavailable", phase: "Deleting" });
    expect(await directory.lookup("young")).toMatchObject({ state: "unavailable", phase: "Provisioning" });
  });

  it("keeps serving a tenant whose version change was refused (Ready false, control plane still serving)", async () => {
    const refused = tenant("acme");
    refused.status = {
      ...refused.status,
      phase: "Failed",
      conditions: [
        { type: "ControlPlaneReady", status: "True", reason: "Running", message: "", lastTransitionTime: "" },
        {
          type: "Ready",
          status: "False",
          reason: "UnsupportedVersion",
          message: "no",
          lastTransitionTime: "",
        },
      ],
    };
    expect(await directoryWith([refused]).lookup("acme")).toMatchObject({ state: "ready" });
  });
});
