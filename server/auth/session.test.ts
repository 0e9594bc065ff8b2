import { encode } from "next-auth/jwt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { sessionUserFromCookieHeader as decode, parseCookieHeader } from "./session";

/** The membership as the database would answer: the role the sign-in recorded. */
const sameRole = async (user: SessionUser) => user.role;
const sessionUserFromCookieHeader = (header: string | undefined) => decode(header, sameRole);

const secret = "a-test-secret-that-is-long-enough-to-use-0123456789";
const claims = {
  uid: "u1",
  subject: "acme:acme-admin",
  tenant: "acme",
  role: "tenant-admin" as const,
  name: "Alice",
};

let saved: NodeJS.ProcessEnv;
beforeEach(() => {
  saved = { ...process.env };
  process.env.NEXTAUTH_SECRET = secret;
  process.env.NEXTAUTH_URL = "http://localhost:3000";
});
afterEach(() => {
  process.env = saved;
});

describe("session cookie", () => {
  it("decodes the user from a next-auth session cookie", async () => {
    const token = await encode({ token: claims, secret });
    const user = await sessionUserFromCookieHeader(`theme=dark; next-auth.session-token=${token}`);
    expect(user).toEqual({
      id: "u1",
      subject: "acme:acme-admin",
      tenant: "acme",
      role: "tenant-admin",
      name: "Alice",
      email: null,
    });
  });

  it("rejects forged, foreign-secret, incomplete and missing cookies", async () => {
    expect(await sessionUserFromCookieHeader("next-auth.session-token=forged")).toBeNull();
    const foreign = await encode({ token: claims, secret: "another-secret-another-secret-another-secret" });
    expect(await sessionUserFromCookieHeader(`next-auth.session-token=${foreign}`)).toBeNull();
    const incomplete = await encode({ token: { uid: "u1" }, secret });
    expect(await sessionUserFromCookieHeader(`next-auth.session-token=${incomplete}`)).toBeNull();
    expect(await sessionUserFromCookieHeader(undefined)).toBeNull();
  });

  it("takes the role the membership holds now, and no session when it grants nothing", async () => {
    const token = await encode({ token: claims, secret });
    const cookie = `next-auth.session-token=${token}`;
    expect((await decode(cookie, async () => "tenant-viewer"))?.role).toBe("tenant-viewer");
    expect(await decode(cookie, async () => null)).toBeNull();
  });

  it("rejects expired sessions", async () => {
    const expired = await encode({ token: claims, secret, maxAge: -60 });
    expect(await sessionUserFromCookieHeader(`next-auth.session-token=${expired}`)).toBeNull();
  });
});

describe("parseCookieHeader", () => {
  it("keeps the first occurrence and tolerates bad encoding", () => {
    expect(parseCookieHeader("a=1; a=2; b=%E0%A4%A; c")).toEqual({ a: "1", b: "%E0%A4%A" });
  });
});
