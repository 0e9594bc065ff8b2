/**
 * The egress wall of a local tenant control plane, attacked as a tenant admin would: a CRD whose
 * conversion webhook URL points at this host — a live service, a closed port, another loopback
 * address — is refused with one message whatever is there, and the live service never sees a connection.
 * Ring0's own webhook server stays reachable through the wall.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setWebhookEndpoint } from "@/server/admission/registration";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { killProcessesMentioning, run } from "@/server/cluster/process";
import { type ClusterConnection, connectCluster } from "@/server/k8s/cluster";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { kubeconfigFromAccess, type Provisioner } from "../types";
import { createLocalProvisioner } from ".";
import { egressPaths } from "./egress";

const logger = createLogger({}, "error");
let stateDir = "";
let provisioner: Provisioner;
let conn: ClusterConnection;
const tenant = "walled";

/** A TCP server on 127.0.0.1 that counts the connections it gets. */
async function listener(): Promise<{ port: number; connections: () => number; close: () => void }> {
  let count = 0;
  const server = net.createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => count,
    close: () => server.close(),
  };
}

async function closedPort(): Promise<number> {
  const probe = await listener();
  probe.close();
  return probe.port;
}

/** A CRD with versions v1 (stored) and v2, converted by a webhook at `url`. */
function crd(group: string, url: string) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      scope: "Namespaced",
      versions: ["v1", "v2"].map((name) => ({
        name,
        served: true,
        storage: name === "v1",
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      })),
      conversion: {
        strategy: "Webhook",
        webhook: { conversionReviewVersions: ["v1"], clientConfig: { url } },
      },
    },
  };
}

/** What the tenant sees when its object is read at the version its webhook must convert to. */
async function conversionError(group: string, url: string): Promise<string> {
  await kubeRequest(conn, {
    method: "POST",
    path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    body: crd(group, url),
  });
  await eventually(async () => {
    const created = await kubeRequestText(conn, {
      method: "POST",
      path: `/apis/${group}/v1/namespaces/default/widgets`,
      body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w" } },
    });
    return created.status === 201 || created.status === 409 ? true : undefined;
  }, 30_000);
  const read = await kubeRequestText(conn, { path: `/apis/${group}/v2/namespaces/default/widgets/w` });
  expect(read.status).not.toBe(200);
  return (JSON.parse(read.text) as { message: string }).message;
}

/** The message with what differs by attempt taken out (group, address). */
const neutral = (message: string, group: string, address: string) =>
  message.replaceAll(group, "<group>").replaceAll(address, "<address>");

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-egress-"));
  const binDir = await kubeBinaries(logger, { build: false });
  const printed = await run(path.join(binDir, "kube-apiserver"), ["--version"], { timeoutMs: 30_000 });
  const version = /v(\d+\.\d+\.\d+)/.exec(printed.stdout)?.[1] ?? "";
  provisioner = createLocalProvisioner({ stateDir, logger, versions: { [version]: binDir } });
  await provisioner.ensure({ tenant, version, suspended: false });
  await eventually(
    async () => ((await provisioner.observe(tenant)).phase === "Running" ? true : undefined),
    90_000,
  );
  const access = await provisioner.access(tenant);
  if (!access) throw new Error("no access");
  conn = connectCluster("egress-test", { inline: kubeconfigFromAccess(access, tenant) });
}, 180_000);

afterAll(async () => {
  setWebhookEndpoint(null);
  try {
    await provisioner?.destroy(tenant);
  } finally {
    await killProcessesMentioning(`${stateDir}/`);
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}, 60_000);

describe("a tenant control plane's egress wall", { timeout: 120_000 }, () => {
  it("refuses webhook URLs on this host with one message, whatever listens there, and dials none", async () => {
    const live = await listener();
    try {
      const closed = await closedPort();
      const attempts = [
        { group: "live.example.com", address: `127.0.0.1:${live.port}` },
        { group: "closed.example.com", address: `127.0.0.1:${closed}` },
        { group: "other.example.com", address: "127.0.0.2:443" },
      ];
      const messages = [];
      for (const attempt of attempts) {
        const message = await conversionError(attempt.group, `https://${attempt.address}/convert`);
        messages.push(neutral(message, attempt.group, attempt.address));
      }
      expect(messages[0]).toMatch(/proxy error .*while dialing <address>, code 403: 403 Forbidden/);
      expect(new Set(messages).size).toBe(1);
      // Nothing reached the live service: the wall refused before dialling.
      expect(live.connections()).toBe(0);
    } finally {
      live.close();
    }
  });

  it("lets Ring0's own webhook server through, and only it", async () => {
    const ring0 = await listener();
    try {
      setWebhookEndpoint({ baseUrl: `https://127.0.0.1:${ring0.port}`, caBundle: "" });
      const { socket } = egressPaths(path.join(stateDir, "tenants", tenant));
      const answer = (target: string) =>
        new Promise<string>((resolve, reject) => {
          const client = net.connect(socket, () =>
            client.write(`CONNECT ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
          );
          let text = "";
          client.on("data", (chunk) => {
            text += chunk.toString();
            client.destroy();
          });
          client.on("close", () => resolve(text));
          client.on("error", reject);
        });
      expect(await answer(`127.0.0.1:${ring0.port}`)).toMatch(/^HTTP\/1\.1 200 /);
      await eventually(async () => (ring0.connections() === 1 ? true : undefined), 10_000);
      expect(await answer(`127.0.0.1:${ring0.port + 1}`)).toMatch(/^HTTP\/1\.1 403 /);
      expect(await answer(`localhost:${ring0.port}`)).toMatch(/^HTTP\/1\.1 403 /);
      expect(await answer("not a target")).toMatch(/^HTTP\/1\.1 400 /);
      expect(fs.statSync(socket).mode & 0o077).toBe(0);
    } finally {
      setWebhookEndpoint(null);
      ring0.close();
    }
  });
});
