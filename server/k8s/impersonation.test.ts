import { describe, expect, it } from "vitest";
import { upstreamRequestHeaders } from "./impersonation";

const impersonate = { user: "gw-a:alice", groups: ["ring0:tenant:gw-a", "ring0:tenant:gw-a:admins"] };

describe("upstreamRequestHeaders", () => {
  it("drops every identity claim and sets the gateway's impersonation", () => {
    const out = upstreamRequestHeaders(
      {
        authorization: "Bearer r0_secret",
        cookie: "next-auth.session-token=x",
        "impersonate-user": "system:admin",
        "impersonate-group": "system:masters",
        "impersonate-uid": "0",
        "impersonate-extra-scopes": "all",
        "x-remote-user": "system:admin",
        "x-remote-group": "system:masters",
        "x-remote-extra-foo": "bar",
        "proxy-authorization": "Basic x",
        accept: "application/json",
        "user-agent": "kubectl/v1.36.4",
        "content-type": "application/apply-patch+yaml",
        "content-length": "12",
        host: "ring0.example.com",
      },
      { impersonate, host: "127.0.0.1:6443", clientAddress: "10.0.0.1", upgrade: false },
    );
    expect(out).toEqual({
      accept: "application/json",
      "user-agent": "kubectl/v1.36.4",
      "content-type": "application/apply-patch+yaml",
      "content-length": "12",
      host: "127.0.0.1:6443",
      "x-forwarded-for": "10.0.0.1",
      "impersonate-user": "gw-a:alice",
      "impersonate-group": ["ring0:tenant:gw-a", "ring0:tenant:gw-a:admins"],
    });
  });

  it("drops hop-by-hop headers and whatever Connection lists", () => {
    const out = upstreamRequestHeaders(
      {
        connection: "keep-alive, X-Secret-Hop",
        "x-secret-hop": "1",
        "keep-alive": "timeout=5",
        te: "trailers",
        trailer: "x",
        "transfer-encoding": "chunked",
        upgrade: "websocket",
        "proxy-connection": "keep-alive",
        expect: "100-continue",
        accept: "*/*",
      },
      { impersonate, host: "h", upgrade: false },
    );
    expect(Object.keys(out).sort()).toEqual(["accept", "host", "impersonate-group", "impersonate-user"]);
  });

  it("keeps Connection: Upgrade and Upgrade for upgrade requests only", () => {
    const out = upstreamRequestHeaders(
      {
        connection: "Upgrade, x-hop",
        "x-hop": "1",
        upgrade: "SPDY/3.1",
        "x-stream-protocol-version": "v4.channel.k8s.io",
        "impersonate-user": "system:admin",
      },
      { impersonate, host: "h", upgrade: true },
    );
    expect(out).toMatchObject({
      connection: "Upgrade",
      upgrade: "SPDY/3.1",
      "x-stream-protocol-version": "v4.channel.k8s.io",
      "impersonate-user": "gw-a:alice",
    });
    expect(out).not.toHaveProperty("x-hop");
  });

  it("appends the client to an existing X-Forwarded-For", () => {
    const out = upstreamRequestHeaders(
      { "x-forwarded-for": "1.2.3.4" },
      { impersonate, host: "h", clientAddress: "127.0.0.1", upgrade: false },
    );
    expect(out["x-forwarded-for"]).toBe("1.2.3.4, 127.0.0.1");
  });
});
