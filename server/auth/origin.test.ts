import { describe, expect, it } from "vitest";
import { hasBearer, isSafeMethod, originRefusal } from "./origin";

const allowed = ["http://localhost:3000", "https://ring0.example.com"];
const source = (origin: string | null, referer: string | null = null, bearer = false) => ({
  origin,
  referer,
  bearer,
});

describe("originRefusal", () => {
  it("lets Ring0's own origins act with the session cookie", () => {
    expect(originRefusal(source("http://localhost:3000"), allowed)).toBeNull();
    expect(originRefusal(source("https://ring0.example.com"), allowed)).toBeNull();
  });

  it("refuses any other origin, naming it and the allowed ones", () => {
    const refusal = originRefusal(source("https://evil.example"), allowed);
    expect(refusal).toMatch(
      /^Origin not allowed: "https:\/\/evil.example" is not one of Ring0's own origins/,
    );
    expect(refusal).toContain("RING0_ALLOWED_ORIGINS");
    // Another port of the same host is the same site for cookies, but not the same origin.
    expect(originRefusal(source("http://localhost:3001"), allowed)).not.toBeNull();
    // Sandboxed frames and some redirects send the opaque origin "null".
    expect(originRefusal(source("null"), allowed)).not.toBeNull();
  });

  it("asks the Referer only when Origin is absent", () => {
    expect(originRefusal(source(null, "http://localhost:3000/t/acme/tokens?x=1"), allowed)).toBeNull();
    expect(originRefusal(source(null, "https://evil.example/page"), allowed)).toMatch(/evil.example/);
    expect(originRefusal(source(null, "not a url"), allowed)).not.toBeNull();
    // A foreign Origin is not excused by an allowed Referer.
    expect(originRefusal(source("https://evil.example", "http://localhost:3000/"), allowed)).not.toBeNull();
  });

  it("refuses a cookie request that says nothing of where it comes from", () => {
    expect(originRefusal(source(null), allowed)).toMatch(/must carry the Origin/);
  });

  it("needs no Origin for a bearer token, but refuses a foreign one", () => {
    expect(originRefusal(source(null, null, true), allowed)).toBeNull();
    expect(originRefusal(source("http://localhost:3000", null, true), allowed)).toBeNull();
    expect(originRefusal(source("https://evil.example", null, true), allowed)).not.toBeNull();
  });
});

describe("isSafeMethod and hasBearer", () => {
  it("treats only reads as safe", () => {
    expect(["GET", "head", "OPTIONS", undefined].map(isSafeMethod)).toEqual([true, true, true, true]);
    expect(["POST", "PUT", "PATCH", "DELETE"].map(isSafeMethod)).toEqual([false, false, false, false]);
  });

  it("recognises a bearer credential of any kind", () => {
    expect(hasBearer("Bearer r0_x")).toBe(true);
    expect(hasBearer("  bearer anything")).toBe(true);
    expect(hasBearer("Bearer")).toBe(true);
    expect(hasBearer("Bearers r0_x")).toBe(false);
    expect(hasBearer("Basic eDp5")).toBe(false);
    expect(hasBearer(undefined)).toBe(false);
  });
});
