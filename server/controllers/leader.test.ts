import { describe, expect, it } from "vitest";
import { K8sError } from "@/server/k8s/errors";
import { createLogger } from "@/server/logger";
import { FakeClock } from "./clock";
import { createLeaderElector, type Lease, type LeaseStore, microTime } from "./leader";

const quiet = createLogger({}, "error");

/** One in-memory Lease with resourceVersions; `failing` makes every request fail like an unreachable server. */
function fakeLeaseStore() {
  let lease: Lease | undefined;
  let version = 0;
  const state = { failing: false, updates: 0, beforeUpdate: undefined as (() => void) | undefined };
  const unreachable = () => new K8sError({ status: 0, reason: "Unreachable", message: "unreachable" });
  const store: LeaseStore = {
    async get() {
      if (state.failing) throw unreachable();
      return lease ? structuredClone(lease) : undefined;
    },
    async create(next) {
      if (state.failing) throw unreachable();
      if (lease) throw new K8sError({ status: 409, reason: "AlreadyExists", message: "exists" });
      lease = {
        ...structuredClone(next),
        metadata: { ...next.metadata, resourceVersion: String(++version) },
      };
      return structuredClone(lease);
    },
    async update(next) {
      if (state.failing) throw unreachable();
      state.beforeUpdate?.();
      if (!lease || next.metadata.resourceVersion !== lease.metadata.resourceVersion) {
        throw new K8sError({ status: 409, reason: "Conflict", message: "modified" });
      }
      state.updates++;
      lease = {
        ...structuredClone(next),
        metadata: { ...next.metadata, resourceVersion: String(++version) },
      };
      return structuredClone(lease);
    },
  };
  return {
    store,
    state,
    lease: () => lease,
    /** Another writer changes the Lease behind the electors' backs. */
    write(spec: Lease["spec"]) {
      lease = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "ctl", namespace: "ring0", resourceVersion: String(++version) },
        spec,
      };
    },
  };
}

const timing = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, random: () => 0 };

function elector(store: LeaseStore, clock: FakeClock, identity: string, events: string[] = []) {
  let signal: AbortSignal | undefined;
  const created = createLeaderElector(store, {
    namespace: "ring0",
    name: "ctl",
    identity,
    clock,
    logger: quiet,
    ...timing,
    onStartedLeading(leading) {
      signal = leading;
      events.push(`${identity} started`);
    },
    onStoppedLeading: () => void events.push(`${identity} stopped`),
  });
  return Object.assign(created, { signal: () => signal });
}

describe("leader election", () => {
  it("creates and holds an absent Lease, renewing every renewDeadline/2", async () => {
    const clock = new FakeClock(0);
    const fake = fakeLeaseStore();
    const events: string[] = [];
    const a = elector(fake.store, clock, "a", events);
    a.start();
    await clock.tick(0);
    expect(a.isLeader()).toBe(true);
    expect(events).toEqual(["a started"]);
    expect(fake.lease()?.spec).toMatchObject({
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
    });
    await clock.tick(5_000);
    expect(fake.lease()?.spec?.renewTime).toBe(microTime(5_000));
    await clock.tick(5_000);
    expect(fake.lease()?.spec?.renewTime).toBe(microTime(10_000));
    expect(fake.lease()?.spec?.acquireTime).toBe(microTime(0));
    expect(a.isLeader()).toBe(true);
    await a.stop();
    expect(events).toEqual(["a started", "a stopped"]);
    expect(a.signal()?.aborted).toBe(true);
  });

  it("lets exactly one of two electors lead, and hands over on stop", async () => {
    const clock = new FakeClock(0);
    const fake = fakeLeaseStore();
    const a = elector(fake.store, clock, "a");
    const b = elector(fake.store, clock, "b");
    a.start();
    b.start();
    for (let i = 0; i < 60; i++) {
      await clock.tick(500);
      expect(Number(a.isLeader()) + Number(b.isLeader())).toBe(1);
    }
    const [leader, other] = a.isLeader() ? [a, b] : [b, a];
    await leader.stop();
    expect(leader.isLeader()).toBe(false);
    // Released: no holder, a 1 s duration.
    expect(fake.lease()?.spec).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
    // The other takes over at its next retry, well before a lease duration.
    await clock.tick(timing.retryPeriodMs * 1.2);
    expect(other.isLeader()).toBe(true);
    expect(fake.lease()?.spec).toMatchObject({ holderIdentity: other.identity, leaseTransitions: 1 });
    await other.stop();
  });

  it("waits a full lease duration, as observed locally, before taking a Lease another holder stopped renewing", async () => {
    const clock = new FakeClock(1_000_000);
    const fake = fakeLeaseStore();
    // A holder whose renewTime claims the far future: timestamps in the record are not trusted.
    fake.write({
      holderIdentity: "ghost",
      leaseDurationSeconds: 15,
      renewTime: microTime(9_999_999_999),
      leaseTransitions: 4,
    });
    const a = elector(fake.store, clock, "a");
    a.start();
    await clock.tick(14_000);
    expect(a.isLeader()).toBe(false);
    await clock.tick(4_000);
    expect(a.isLeader()).toBe(true);
    expect(fake.lease()?.spec).toMatchObject({ holderIdentity: "a", leaseTransitions: 5 });
    await a.stop();
  });

  it("does not take a Lease whose holder keeps renewing", async () => {
    const clock = new FakeClock(0);
    const fake = fakeLeaseStore();
    const a = elector(fake.store, clock, "a");
    a.start();
    for (let t = 0; t < 60_000; t += 1_000) {
      fake.write({ holderIdentity: "ghost", leaseDurationSeconds: 15, renewTime: microTime(t) });
      await clock.tick(1_000);
      expect(a.isLeader()).toBe(false);
    }
    await a.stop();
    expect(fake.lease()?.spec?.holderIdentity).toBe("ghost");
  });

  it("stops leading when renewals fail for renewDeadline, before the Lease could expire for others", async () => {
    const clock = new FakeClock(0);
    const fake = fakeLeaseStore();
    const events: string[] = [];
    const a = elector(fake.store, clock, "a", events);
    a.start();
    await clock.tick(0);
    expect(a.isLeader()).toBe(true);
    fake.state.failing = true;
    // Last renewal at 0: leadership must end by renewDeadline (10 s), and not before.
    await clock.tick(9_999);
    expect(a.isLeader()).toBe(true);
    await clock.tick(1);
    expect(a.isLeader()).toBe(false);
    expect(a.signal()?.aborted).toBe(true);
    expect(events).toEqual(["a started", "a stopped"]);
    // When the server is back, it contends again and leads again.
    fake.state.failing = false;
    await clock.tick(timing.retryPeriodMs * 2);
    expect(a.isLeader()).toBe(true);
    expect(events).toEqual(["a started", "a stopped", "a started"]);
    await a.stop();
  });

  it("stops leading at once when it sees another holder", async () => {
    const clock = new FakeClock(0);
    const fake = fakeLeaseStore();
    const a = elector(fake.store, clock, "a");
    a.start();
    await clock.tick(0);
    fake.write({ holderIdentity: "usurper", leaseDurationSeconds: 15, renewTime: microTime(1) });
    await clock.tick(5_000);
    expect(a.isLeader()).toBe(false);
    await a.stop();
    expect(fake.lease()?.spec?.holderIdentity).toBe("usurper");
  });

  it("retries a renewal that hit a Conflict with a fresh read", async () => {
    const clock = new FakeClock(0);
    const fake = fakeLeaseStore();
    const a = elector(fake.store, clock, "a");
    a.start();
    await clock.tick(0);
    let interfered = false;
    fake.state.beforeUpdate = () => {
      if (interfered) return;
      interfered = true;
      // Someone edits the Lease (labels, say) between our read and our write.
      const lease = fake.lease();
      if (lease) fake.write(lease.spec);
    };
    await clock.tick(5_000);
    expect(interfered).toBe(true);
    expect(a.isLeader()).toBe(true);
    expect(fake.lease()?.spec?.renewTime).toBe(microTime(5_000));
    await a.stop();
  });

  it("waits for the leading work to finish before releasing the Lease", async () => {
    const clock = new FakeClock(0);
    const fake = fakeLeaseStore();
    let finishWork: () => void = () => {};
    const a = createLeaderElector(fake.store, {
      namespace: "ring0",
      name: "ctl",
      identity: "a",
      clock,
      logger: quiet,
      ...timing,
      onStartedLeading: (signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener("abort", () => {
            finishWork = resolve;
          });
        }),
    });
    a.start();
    await clock.tick(0);
    const stopped = a.stop();
    await clock.tick(0);
    expect(a.isLeader()).toBe(false);
    expect(fake.lease()?.spec?.holderIdentity).toBe("a");
    finishWork();
    await stopped;
    expect(fake.lease()?.spec?.holderIdentity).toBe("");
  });

  it("rejects timings where the renew deadline is not shorter than the lease", () => {
    expect(() =>
      createLeaderElector(fakeLeaseStore().store, {
        namespace: "n",
        name: "l",
        leaseDurationMs: 10_000,
        renewDeadlineMs: 10_000,
        onStartedLeading: () => {},
      }),
    ).toThrow(RangeError);
  });
});
