import { describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { createLogger } from "@/server/logger";
import { createCredentialRechecks, type HeldCredential, type LostRight, rightStillHeld } from "./rechecks";

const member: SessionUser = {
  id: "u1",
  subject: "acme:adam",
  name: "Adam",
  email: null,
  tenant: "acme",
  role: "tenant-member",
};

describe("rightStillHeld", () => {
  it("holds for the same person, tenant and role", () => {
    expect(rightStillHeld(member, { ...member, name: "Adam M." })).toBeNull();
  });

  it("ends with an invalid credential: revoked, expired, session ended, removed, disabled", () => {
    expect(rightStillHeld(member, null)).toBe("credential-invalid");
  });

  it("ends on any role change, a downgrade above all, and on another person", () => {
    expect(rightStillHeld(member, { ...member, role: "tenant-viewer" })).toBe("role-changed");
    expect(rightStillHeld(member, { ...member, role: "tenant-admin" })).toBe("role-changed");
    expect(rightStillHeld(member, { ...member, id: "u2" })).toBe("role-changed");
    expect(rightStillHeld(member, { ...member, tenant: "globex" })).toBe("role-changed");
  });
});

/** A credential whose current user the test sets, counting how often it is asked. */
function credential(key: string, user: SessionUser | null = member) {
  const state = { user, asked: 0, fail: false };
  const held: HeldCredential = {
    key,
    current: async () => {
      state.asked += 1;
      if (state.fail) throw new Error("database away");
      return state.user;
    },
  };
  return { state, held };
}

const logger = createLogger({}, "error");

describe("createCredentialRechecks", () => {
  it("asks each credential once a round, however many streams it holds, and ends them all", async () => {
    const rechecks = createCredentialRechecks({ logger });
    const token = credential("token:1");
    const ended: LostRight[] = [];
    for (let i = 0; i < 1000; i++) rechecks.hold(token.held, member, (why) => ended.push(why));
    await rechecks.round();
    expect(token.state.asked).toBe(1);
    expect(ended).toEqual([]);

    token.state.user = null;
    await rechecks.round();
    expect(token.state.asked).toBe(2);
    expect(ended).toHaveLength(1000);
    expect(new Set(ended)).toEqual(new Set(["credential-invalid"]));
    expect(rechecks.size()).toBe(0);
    // Ended streams are forgotten: nothing is asked again.
    await rechecks.round();
    expect(token.state.asked).toBe(2);
    rechecks.close();
  });

  it("ends only the streams opened with rights the credential no longer carries", async () => {
    const rechecks = createCredentialRechecks({ logger });
    const token = credential("token:1");
    const ended: string[] = [];
    rechecks.hold(token.held, member, (why) => ended.push(`member:${why}`));
    // Opened after the change, with the new role: it stays.
    rechecks.hold(token.held, { ...member, role: "tenant-viewer" }, (why) => ended.push(`viewer:${why}`));
    token.state.user = { ...member, role: "tenant-viewer" };
    await rechecks.round();
    expect(ended).toEqual(["member:role-changed"]);
    expect(rechecks.size()).toBe(1);
    rechecks.close();
  });

  it("keeps credentials apart and forgets a released stream", async () => {
    const rechecks = createCredentialRechecks({ logger });
    const mine = credential("token:1");
    const theirs = credential("token:2");
    let endedMine = 0;
    let endedTheirs = 0;
    const release = rechecks.hold(mine.held, member, () => {
      endedMine += 1;
    });
    rechecks.hold(theirs.held, member, () => {
      endedTheirs += 1;
    });
    release();
    mine.state.user = null;
    await rechecks.round();
    expect(mine.state.asked).toBe(0);
    expect(endedMine).toBe(0);
    expect(endedTheirs).toBe(0);
    expect(rechecks.size()).toBe(1);
    rechecks.close();
  });

  it("keeps streams open while the check itself fails, and ends them once it answers", async () => {
    const rechecks = createCredentialRechecks({ logger });
    const token = credential("token:1");
    let ended = 0;
    rechecks.hold(token.held, member, () => {
      ended += 1;
    });
    token.state.fail = true;
    token.state.user = null;
    await rechecks.round();
    expect(ended).toBe(0);
    token.state.fail = false;
    await rechecks.round();
    expect(ended).toBe(1);
    rechecks.close();
  });

  it("ends the streams of a credential that stays unverifiable past the limit", async () => {
    let clock = 0;
    const rechecks = createCredentialRechecks({ logger, maxUnverifiedMs: 60_000, now: () => clock });
    const token = credential("token:1");
    const ended: LostRight[] = [];
    rechecks.hold(token.held, member, (why) => ended.push(why));
    token.state.fail = true;
    await rechecks.round();
    clock = 59_000;
    await rechecks.round();
    expect(ended).toEqual([]);
    clock = 61_000;
    await rechecks.round();
    expect(ended).toEqual(["credential-invalid"]);
    rechecks.close();
  });

  it("rechecks by itself on its interval", async () => {
    const rechecks = createCredentialRechecks({ logger, intervalMs: 20 });
    const token = credential("token:1");
    const ended = new Promise<LostRight>((resolve) => rechecks.hold(token.held, member, resolve));
    token.state.user = { ...member, role: "tenant-viewer" };
    expect(await ended).toBe("role-changed");
    rechecks.close();
  });
});
