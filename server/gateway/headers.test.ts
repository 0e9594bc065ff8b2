import { describe, expect, it } from "vitest";
import { asksToImpersonate, bearerToken, clientResponseHeaders } from "./headers";

describe("clientResponseHeaders", () => {
  it("relays end-to-end headers and drops hop-by-hop ones", () => {
    expect(
      clientResponseHeaders({
        "content-type": "application/json",
        "audit-id": "abc",
        connection: "keep-alive",
        "keep-alive": "timeout=5",
        "transfer-encoding": "chunked",
      }),
    ).toEqual({ "content-type": "application/json", "audit-id": "abc" });
    expect(clientResponseHeaders({ connection: "Upgrade", upgrade: "websocket" }, true)).toEqual({
      connection: "Upgrade",
      upgrade: "websocket",
    });
  });
});

describe("bearerToken", () => {
  it("reads Authorization: Bearer only", () => {
    expect(bearerToken({ authorization: "Bearer r0_abc" })).toBe("r0_abc");
    expect(bearerToken({ authorization: "bearer   r0_abc " })).toBe("r0_abc");
    expect(bearerToken({ authorization: "Basic eDp5" })).toBeNull();
    expect(bearerToken({ authorization: "Bearer a b" })).toBeNull();
    expect(bearerToken({ cookie: "token=r0_abc" })).toBeNull();
    expect(bearerToken({})).toBeNull();
  });
});

describe("asksToImpersonate", () => {
  it("finds any Impersonate-* header, however it is spelt", () => {
    expect(asksToImpersonate({ "impersonate-user": "system:admin" })).toBe(true);
    expect(asksToImpersonate({ "impersonate-group": ["system:masters"] })).toBe(true);
    expect(asksToImpersonate({ "impersonate-uid": "0" })).toBe(true);
    expect(asksToImpersonate({ "impersonate-extra-scopes": "view" })).toBe(true);
    expect(asksToImpersonate({ "Impersonate-User": "x" } as never)).toBe(true);
    expect(asksToImpersonate({ authorization: "Bearer r0_abc", "x-remote-user": "x" })).toBe(false);
    expect(asksToImpersonate({})).toBe(false);
  });
});
