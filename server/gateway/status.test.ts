import { describe, expect, it } from "vitest";
import { unreachableAnswer } from "./status";

const failure = (code: string | undefined, message = "connect ECONNREFUSED 127.0.0.1:27001") =>
  Object.assign(new Error(message), code ? { code } : {});

describe("the answer when a control plane cannot be reached", () => {
  it("is a 503 with Retry-After when retrying is safe: refused, or a read", () => {
    expect(unreachableAnswer("acme", failure("ECONNREFUSED"), "POST")).toEqual({
      code: 503,
      message:
        'The control plane of tenant "acme" is not answering right now (ECONNREFUSED); Ring0 restarts a stopped control plane within seconds: retry shortly.',
      retryAfterSeconds: 2,
    });
    for (const code of ["ECONNRESET", "ETIMEDOUT", "ENOTFOUND"]) {
      expect(unreachableAnswer("acme", failure(code), "GET")).toMatchObject({
        code: 503,
        retryAfterSeconds: 2,
      });
    }
  });

  it("never invites a retry of a write the API server may already have applied", () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const answer = unreachableAnswer("acme", failure("ECONNRESET"), method);
      expect(answer.code).toBe(503);
      expect(answer.retryAfterSeconds).toBeUndefined();
      expect(answer.message).toContain("it may or may not have been applied: check before you retry");
    }
  });

  it("is a 502 for what retrying does not fix, and never names an internal address", () => {
    const tls = unreachableAnswer(
      "acme",
      failure("ERR_TLS_CERT_ALTNAME_INVALID", "Host: 10.0.0.7 is not in the cert's altnames"),
    );
    expect(tls).toEqual({
      code: 502,
      message: 'The control plane of tenant "acme" could not be reached (ERR_TLS_CERT_ALTNAME_INVALID).',
    });
    for (const method of ["GET", "POST"]) {
      for (const code of ["ECONNREFUSED", "ECONNRESET", undefined]) {
        expect(unreachableAnswer("acme", failure(code), method).message).not.toMatch(
          /127\.0\.0\.1|10\.0\.0\.7/,
        );
      }
    }
  });
});
