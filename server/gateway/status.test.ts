import { describe, expect, it } from "vitest";
import { unreachableAnswer } from "./status";

const failure = (code: string | undefined, message = "boom") =>
  Object.assign(new Error(message), code ? { code } : {});

describe("the answer when a control plane cannot be reached", () => {
  it("is a 503 with Retry-After while it is down or restarting, naming the tenant", () => {
    for (const code of ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT"]) {
      expect(unreachableAnswer("acme", failure(code))).toEqual({
        code: 503,
        message: `The control plane of tenant "acme" is not answering right now (${code}); Ring0 restarts a stopped control plane within seconds: retry shortly.`,
        retryAfterSeconds: 2,
      });
    }
  });

  it("is a 502 for what retrying does not fix (TLS, protocol)", () => {
    expect(unreachableAnswer("acme", failure("ERR_TLS_CERT_ALTNAME_INVALID", "bad certificate"))).toEqual({
      code: 502,
      message: 'The control plane of tenant "acme" could not be reached: bad certificate',
    });
    expect(unreachableAnswer("acme", failure(undefined, "socket hang up")).code).toBe(502);
  });
});
