import { describe, expect, it } from "vitest";
import { cachingVerifier } from "./token-cache";

describe("cachingVerifier", () => {
  it("reuses a success within the TTL, asks again after it, and never caches a refusal", async () => {
    let clock = 0;
    const calls: string[] = [];
    let valid = true;
    const verify = cachingVerifier(
      async (token: string) => {
        calls.push(token);
        return valid ? { user: "ada" } : null;
      },
      { ttlMs: 2_000, now: () => clock },
    );
    expect(await verify("r0_a")).toEqual({ user: "ada" });
    clock = 1_999;
    expect(await verify("r0_a")).toEqual({ user: "ada" });
    expect(calls).toEqual(["r0_a"]);

    // Revoked meanwhile: honoured as soon as the entry is older than the TTL.
    valid = false;
    clock = 2_000;
    expect(await verify("r0_a")).toBeNull();
    expect(await verify("r0_a")).toBeNull();
    expect(calls).toEqual(["r0_a", "r0_a", "r0_a"]);
  });

  it("keeps at most `max` entries", async () => {
    const calls: string[] = [];
    const verify = cachingVerifier(
      async (token: string) => {
        calls.push(token);
        return token;
      },
      { max: 2 },
    );
    await verify("r0_a");
    await verify("r0_b");
    await verify("r0_c");
    await verify("r0_a");
    expect(calls).toEqual(["r0_a", "r0_b", "r0_c", "r0_a"]);
  });
});

describe("cachingVerifier.refresh", () => {
  it("asks past the cache and keeps the answer, so a refusal it finds holds for the next request", async () => {
    let clock = 0;
    let valid = true;
    const calls: string[] = [];
    const verify = cachingVerifier(
      async (token: string) => {
        calls.push(token);
        return valid ? { user: "ada" } : null;
      },
      { ttlMs: 2_000, now: () => clock },
    );
    expect(await verify("r0_a")).toEqual({ user: "ada" });
    valid = false;
    clock = 100;
    // Within the TTL a plain call would still answer from the cache; a recheck does not.
    expect(await verify.refresh("r0_a")).toBeNull();
    expect(await verify("r0_a")).toBeNull();
    expect(calls).toEqual(["r0_a", "r0_a", "r0_a"]);

    valid = true;
    expect(await verify.refresh("r0_a")).toEqual({ user: "ada" });
    expect(await verify("r0_a")).toEqual({ user: "ada" });
    expect(calls).toHaveLength(4);
  });
});
