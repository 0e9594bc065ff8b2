import { describe, expect, it } from "vitest";
import { execStreamPath, streamUrl } from "@/components/streams/stream-paths";
import { execQuery } from "@/server/core/stream-protocol";

describe("streamUrl", () => {
  it("uses wss on https and the page's host", () => {
    expect(streamUrl("/ws/logs?a=1", { protocol: "https:", host: "ring0.example:8443" })).toBe(
      "wss://ring0.example:8443/ws/logs?a=1",
    );
    expect(streamUrl("/ws/exec", { protocol: "http:", host: "localhost:3000" })).toBe(
      "ws://localhost:3000/ws/exec",
    );
  });
});

describe("execStreamPath", () => {
  it("writes a query the server's schema accepts", () => {
    const path = execStreamPath({
      source: "tenant-pod",
      tenant: "acme",
      namespace: "default",
      pod: "web",
      container: "app",
      shell: "bash",
      cols: 120,
      rows: 40,
    });
    expect(path).toBe(
      "/ws/exec?source=tenant-pod&tenant=acme&namespace=default&pod=web&container=app&shell=bash&cols=120&rows=40",
    );
    const parsed = execQuery.safeParse(Object.fromEntries(new URL(path, "http://x").searchParams));
    expect(parsed.success).toBe(true);
  });

  it("leaves out an empty container (the pod's default)", () => {
    expect(
      execStreamPath({
        source: "super-pod",
        namespace: "kube-system",
        pod: "p",
        container: "",
        shell: "auto",
        cols: 80,
        rows: 24,
      }),
    ).toBe("/ws/exec?source=super-pod&namespace=kube-system&pod=p&shell=auto&cols=80&rows=24");
  });
});
