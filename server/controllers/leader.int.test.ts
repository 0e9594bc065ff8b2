import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, testNamespace, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { createLeaderElector, type LeaderElector, type Lease } from "./leader";

const conn = testSuperCluster();
const quiet = createLogger({}, "error");

describe("leader election on a real Lease", () => {
  let namespace = "";
  let cleanup: () => Promise<void> = async () => {};

  beforeAll(async () => {
    [namespace, cleanup] = await testNamespace(conn, "leader");
  });
  afterAll(async () => {
    await cleanup();
  });

  it("lets exactly one of two electors lead and hands over when it stops", async () => {
    let leaders = 0;
    let doubleLeadership = 0;
    const make = (identity: string): LeaderElector =>
      createLeaderElector(conn, {
        namespace,
        name: "controllers",
        identity,
        leaseDurationMs: 4_000,
        renewDeadlineMs: 3_000,
        retryPeriodMs: 500,
        logger: quiet,
        onStartedLeading: () => {
          leaders++;
          if (leaders > 1) doubleLeadership++;
        },
        onStoppedLeading: () => {
          leaders--;
        },
      });
    const electors = [make("elector-a"), make("elector-b")];
    const sampler = setInterval(() => {
      if (electors.filter((elector) => elector.isLeader()).length > 1) doubleLeadership++;
    }, 10);
    try {
      for (const elector of electors) elector.start();
      const first = await eventually(() => electors.find((elector) => elector.isLeader()));
      const second = electors.find((elector) => elector !== first);
      if (!second) throw new Error("two electors expected");

      // It stays that way across several renewals.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(first.isLeader()).toBe(true);
      expect(second.isLeader()).toBe(false);
      const held = await kubeRequest<Lease>(conn, {
        path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/controllers`,
      });
      expect(held.spec?.holderIdentity).toBe(first.identity);

      await first.stop();
      expect(first.isLeader()).toBe(false);
      // Released, so the other takes over at its next retry rather than after a lease duration.
      await eventually(() => second.isLeader(), 10_000);
      await eventually(async () => {
        const lease = await kubeRequest<Lease>(conn, {
          path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/controllers`,
        });
        return lease.spec?.holderIdentity === second.identity;
      }, 10_000);
      await second.stop();
      expect(doubleLeadership).toBe(0);
      expect(leaders).toBe(0);
    } finally {
      clearInterval(sampler);
      await Promise.all(electors.map((elector) => elector.stop()));
    }
  });
});
