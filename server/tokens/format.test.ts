import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  encodeBase62,
  generateToken,
  hashToken,
  isWellFormedToken,
  sameHash,
  tokenPrefix,
} from "@/server/tokens/format";

const filled = (byte: number) => (size: number) => new Uint8Array(size).fill(byte);

describe("token format", () => {
  it("is r0_ and 43 base62 characters", () => {
    const token = generateToken();
    expect(token).toMatch(/^r0_[0-9A-Za-z]{43}$/);
    expect(isWellFormedToken(token)).toBe(true);
  });

  it("draws 32 bytes and encodes every value, smallest and largest, at full width", () => {
    let requested = 0;
    const zero = generateToken((size) => {
      requested = size;
      return new Uint8Array(size);
    });
    expect(requested).toBe(32);
    expect(zero).toBe(`r0_${"0".repeat(43)}`);
    const max = generateToken(filled(0xff));
    expect(max).toHaveLength(46);
    expect(isWellFormedToken(max)).toBe(true);
  });

  it("encodes base62 big-endian", () => {
    expect(encodeBase62(Uint8Array.of(61), 2)).toBe("0z");
    expect(encodeBase62(Uint8Array.of(62), 2)).toBe("10");
    expect(encodeBase62(Uint8Array.of(1, 0), 3)).toBe("048"); // 256 = 4·62 + 8
    expect(() => encodeBase62(Uint8Array.of(1, 0), 1)).toThrow(RangeError);
  });

  it("gives distinct tokens", () => {
    const tokens = new Set(Array.from({ length: 200 }, () => generateToken()));
    expect(tokens.size).toBe(200);
  });

  it.each([
    "",
    "r0_",
    "r0_short",
    `r1_${"a".repeat(43)}`,
    `R0_${"a".repeat(43)}`,
    `r0_${"a".repeat(42)}`,
    `r0_${"a".repeat(44)}`,
    `r0_${"a".repeat(42)}-`,
    ` r0_${"a".repeat(43)}`,
    `r0_${"a".repeat(43)}\n`,
    `Bearer r0_${"a".repeat(43)}`,
  ])("rejects malformed %j", (candidate) => {
    expect(isWellFormedToken(candidate)).toBe(false);
  });
});

describe("token hash and prefix", () => {
  it("hashes with SHA-256 hex", () => {
    const token = generateToken(filled(7));
    expect(hashToken(token)).toBe(createHash("sha256").update(token).digest("hex"));
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("shows the marker and 9 characters, not enough to use the token", () => {
    const token = generateToken(filled(0xab));
    expect(tokenPrefix(token)).toBe(token.slice(0, 12));
    expect(tokenPrefix(token).startsWith("r0_")).toBe(true);
  });

  it("compares digests", () => {
    const hash = hashToken("r0_a");
    expect(sameHash(hash, hashToken("r0_a"))).toBe(true);
    expect(sameHash(hash, hashToken("r0_b"))).toBe(false);
    expect(sameHash(hash, hash.slice(0, 62))).toBe(false);
    expect(sameHash("", "")).toBe(false);
  });
});
