import { describe, expect, it } from "vitest";
import { createLogger } from "@/server/logger";
import type { ControlPlaneFault } from "@/server/provisioners/types";
import type { DetectedFault } from "./observed";
import type { TenantResource } from "./tenant-resources";
import { shouldServe, startWatchdog } from "./watchdog";

const quiet = createLogger({}, "error");

function tenant(name: string, phase: string, extra: Partial<TenantResource> = {}): TenantResource {
  return {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "Tenant",
    metadata: { name, uid: `uid-${name}` },
    spec: { controlPlane: { provisioner: "local" } },
    status: {
      phase: phase as never,
      provisioner: "local",
      conditions: [
        {
          type: "ControlPlaneReady",
          status: phase === "Ready" ? "True" : "False",
          reason: "",
          message: "",
          lastTransitionTime: "2026-11-21T10:00:00Z",
        },
      ],
    },
    ...extra,
  };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe("the control-plane watchdog", () => {
  it("probes only control planes that should serve", () => {
    expect(shouldServe(tenant("a", "Ready"))).toBe(true);
    expect(shouldServe(tenant("a", "Degraded"))).toBe(true);
    expect(shouldServe(tenant("a", "Provisioning"))).toBe(false);
    expect(shouldServe(tenant("a", "Ready", { spec: { suspend: true } }))).toBe(false);
    expect(
      shouldServe(
        tenant("a", "Ready", { metadata: { name: "a", deletionTimestamp: "2026-11-21T10:00:00Z" } }),
      ),
    ).toBe(false);
  });

  it("hands over an exited component at once, once per fault, and an unresponsive one after probes in a row", async () => {
    const answers = new Map<string, ControlPlaneFault | undefined>();
    const probed: string[] = [];
    const found: [string, DetectedFault][] = [];
    const tenants = [tenant("acme", "Ready"), tenant("globex", "Ready"), tenant("initech", "Provisioning")];
    const watchdog = startWatchdog({
      provisioners: {
        local: {
          probe: async (name) => {
            probed.push(name);
            return answers.get(name);
          },
        },
      },
      defaultProvisioner: "local",
      tenants: () => tenants,
      onFault: (name, fault) => found.push([name, fault]),
      logger: quiet,
      intervalMs: 5,
      unresponsiveProbes: 3,
    });
    try {
      answers.set("acme", { component: "kube-apiserver", kind: "exited", message: "kube-apiserver exited" });
      answers.set("globex", { component: "kube-apiserver", kind: "unresponsive", message: "no answer" });
      await until(() => found.length >= 2);
      const probesOfGlobex = probed.filter((name) => name === "globex").length;
      expect(found.map(([name, fault]) => [name, fault.kind])).toEqual([
        ["acme", "exited"],
        ["globex", "unresponsive"],
      ]);
      // globex needed three probes in a row; initech (not serving yet) was never probed.
      expect(probesOfGlobex).toBeGreaterThanOrEqual(3);
      expect(probed).not.toContain("initech");
      // Still down on later rounds: not handed over again within reportEveryMs (5 s by default).
      const rounds = probed.length;
      await until(() => probed.length >= rounds + 6);
      expect(found).toHaveLength(2);
    } finally {
      await watchdog.stop();
    }
  });

  it("hands a fault over again while the tenant still reads Ready after reportEveryMs, and times out a hung probe", async () => {
    const found: string[] = [];
    const watchdog = startWatchdog({
      provisioners: {
        local: {
          probe: (name) =>
            name === "hung"
              ? new Promise(() => {})
              : Promise.resolve({ component: "etcd", kind: "exited" as const, message: "etcd exited" }),
        },
      },
      defaultProvisioner: "local",
      tenants: () => [tenant("acme", "Ready"), tenant("hung", "Ready")],
      onFault: (name, fault) => found.push(`${name}:${fault.kind}`),
      logger: quiet,
      intervalMs: 5,
      unresponsiveProbes: 2,
      probeTimeoutMs: 20,
      reportEveryMs: 30,
    });
    try {
      await until(() => found.filter((entry) => entry === "acme:exited").length >= 2);
      await until(() => found.includes("hung:unresponsive"));
      expect(found.filter((entry) => entry === "acme:exited").length).toBeGreaterThanOrEqual(2);
      expect(found).toContain("hung:unresponsive");
    } finally {
      await watchdog.stop();
    }
  });

  it("kills no API server for silence when most of them go silent at once (Ring0 itself is starved)", async () => {
    const found: string[] = [];
    const names = ["a", "b", "c", "d"];
    let round = 0;
    const watchdog = startWatchdog({
      provisioners: {
        local: {
          probe: async (name) => {
            if (name === "a") round++;
            if (name === "d") return { component: "etcd", kind: "exited" as const, message: "etcd exited" };
            return { component: "kube-apiserver", kind: "unresponsive" as const, message: "silent" };
          },
        },
      },
      defaultProvisioner: "local",
      tenants: () => names.map((name) => tenant(name, "Ready")),
      onFault: (name, fault) => found.push(`${name}:${fault.kind}`),
      logger: quiet,
      intervalMs: 5,
      unresponsiveProbes: 1,
    });
    try {
      await until(() => round >= 5);
      // d's exit is a fact and is handed over; a, b and c's silence is not.
      expect(found).toEqual(["d:exited"]);
    } finally {
      await watchdog.stop();
    }
  });

  it("forgets a probe that throws and keeps going", async () => {
    let calls = 0;
    const found: string[] = [];
    const watchdog = startWatchdog({
      provisioners: {
        local: {
          probe: async () => {
            calls++;
            if (calls === 1) throw new Error("boom");
            return { component: "etcd", kind: "exited", message: "etcd exited" };
          },
        },
      },
      defaultProvisioner: "local",
      tenants: () => [tenant("acme", "Ready")],
      onFault: (name) => found.push(name),
      logger: quiet,
      intervalMs: 5,
    });
    try {
      await until(() => found.length > 0);
      expect(found).toEqual(["acme"]);
    } finally {
      await watchdog.stop();
    }
  });
});
