import { describe, expect, it } from "vitest";
import { forwardedRequestHeaders, forwardedResponseHeaders, kubeletAddress } from "./agent";

describe("headers the vn-agent forwards", () => {
  it("passes stream negotiation on and drops the caller's identity and hop-by-hop headers", () => {
    const headers = forwardedRequestHeaders(
      {
        authorization: "Bearer secret",
        "x-remote-user": "admin",
        "impersonate-user": "admin",
        cookie: "a=b",
        "x-forwarded-for": "1.2.3.4",
        "keep-alive": "timeout=5",
        connection: "Upgrade",
        upgrade: "SPDY/3.1",
        "x-stream-protocol-version": "v4.channel.k8s.io",
        "user-agent": "kube-apiserver",
      },
      true,
    );
    expect(headers).toEqual({
      connection: "Upgrade",
      upgrade: "SPDY/3.1",
      "x-stream-protocol-version": "v4.channel.k8s.io",
      "user-agent": "kube-apiserver",
    });
    expect(forwardedRequestHeaders({ connection: "Upgrade", upgrade: "websocket" }, false)).toEqual({});
  });

  it("strips hop-by-hop headers (and those Connection names) and cookies from responses", () => {
    expect(
      forwardedResponseHeaders({
        connection: "close, x-private",
        "x-private": "1",
        "transfer-encoding": "chunked",
        "set-cookie": ["a=b"],
        "content-type": "text/plain",
      }),
    ).toEqual({ "content-type": "text/plain" });
  });
});

describe("kubeletAddress", () => {
  const node = (address: string, port?: number) => ({
    status: {
      addresses: [
        { type: "Hostname", address },
        { type: "InternalIP", address: "192.0.2.1" },
      ],
      ...(port ? { daemonEndpoints: { kubeletEndpoint: { Port: port } } } : {}),
    },
  });
  it("dials only a kubelet on this machine, at its reported port", () => {
    expect(kubeletAddress(node("localhost", 10250))).toEqual({
      host: "127.0.0.1",
      port: 10250,
      servername: "localhost",
    });
    expect(kubeletAddress(node("node-1.example", 10250))).toHaveProperty("refused");
    expect(kubeletAddress(node("localhost"))).toHaveProperty("refused");
    expect(kubeletAddress(undefined)).toHaveProperty("refused");
  });

  const realNode = (name: string, ip: string, labelled = true) => ({
    metadata: { name, labels: (labelled ? { "ring0.dev/real-node": "true" } : {}) as Record<string, string> },
    status: {
      addresses: [
        { type: "InternalIP", address: ip },
        { type: "Hostname", address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    },
  });
  it("dials a real node's kubelet only on the node IP Ring0 gave that node", () => {
    expect(kubeletAddress(realNode("ring0-real-1", "10.244.1.1"))).toEqual({
      host: "10.244.1.1",
      port: 10250,
      servername: "ring0-real-1",
    });
    // Another node's IP, an address outside this host, an unlabelled or foreign node: never dialled.
    expect(kubeletAddress(realNode("ring0-real-1", "10.244.0.1"))).toHaveProperty("refused");
    expect(kubeletAddress(realNode("ring0-real-1", "192.0.2.1"))).toHaveProperty("refused");
    expect(kubeletAddress(realNode("ring0-real-1", "10.244.1.1", false))).toHaveProperty("refused");
    expect(kubeletAddress(realNode("worker-1", "10.244.1.1"))).toHaveProperty("refused");
    expect(kubeletAddress(realNode("ring0-real-99", "10.244.99.1"))).toHaveProperty("refused");
  });
});
