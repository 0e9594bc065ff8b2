/**
 * The egress wall of a local tenant control plane, attacked as a tenant admin would (impersonated
 * with the admins' group, under Ring0's tenant defaults): CRD conversion webhooks, admission
 * webhooks and an APIService that point at this host — a live service, a closed port, another
 * loopback address, the control plane's own API server — are refused with one message whatever is
 * there, and the live service never sees a connection. Ring0's own webhook server stays reachable
 * through the wall, and Ring0's own objects among the admission configuration stay Ring0's.
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
import { applyTenantDefaults, protectedLabel } from "@/server/tenants/defaults";
import { roleGroup } from "@/server/tenants/kube-identity";
import { apiService, configMapWebhook, serviceAt } from "@/test/integration/extensions";
import { kubeconfigFromAccess, type Provisioner } from "../types";
import { createLocalProvisioner } from ".";
import { egressPaths, RING0_WEBHOOK_TUNNELS } from "./egress";

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

/** A tenant admin of this tenant, as the kube gateway makes one (its user and the admins' group). */
const asAdmin = { "Impersonate-User": `${tenant}:mallory`, "Impersonate-Group": roleGroup(tenant, "admin") };

/** What the tenant sees when its object is read at the version its webhook must convert to. */
async function conversionError(group: string, url: string): Promise<string> {
  await kubeRequest(conn, {
    method: "POST",
    path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    body: crd(group, url),
    headers: asAdmin,
  });
  // Ring0's tenant reconciler grants the admins rights in the group of a new CRD.
  await applyTenantDefaults(conn, { tenant, admins: [] });
  await eventually(async () => {
    const created = await kubeRequestText(conn, {
      method: "POST",
      path: `/apis/${group}/v1/namespaces/default/widgets`,
      body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w" } },
      headers: asAdmin,
    });
    return created.status === 201 || created.status === 409 ? true : undefined;
  }, 30_000);
  const read = await kubeRequestText(conn, {
    path: `/apis/${group}/v2/namespaces/default/widgets/w`,
    headers: asAdmin,
  });
  expect(read.status).not.toBe(200);
  return (JSON.parse(read.text) as { message: string }).message;
}

/** What the tenant sees when a ConfigMap is created under its validating webhook at `url`. */
async function admissionError(name: string, url: string, meanwhile?: () => Promise<void>): Promise<string> {
  await kubeRequest(conn, {
    method: "POST",
    path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    headers: asAdmin,
    body: configMapWebhook(name, { url }),
  });
  try {
    // The configuration takes effect a moment after it is created.
    const refused = await eventually(async () => {
      const created = await kubeRequestText(conn, {
        method: "POST",
        path: "/api/v1/namespaces/default/configmaps",
        headers: asAdmin,
        body: {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { generateName: "c-", labels: { webhook: name } },
        },
      });
      return created.status === 201 ? undefined : (JSON.parse(created.text) as { message: string }).message;
    }, 30_000);
    await meanwhile?.();
    return refused;
  } finally {
    await kubeRequest(conn, {
      method: "DELETE",
      path: `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`,
      headers: asAdmin,
    });
  }
}

/** The message with what differs by attempt taken out (group, address). */
const neutral = (message: string, group: string, address: string) =>
  message.replaceAll(group, "<group>").replaceAll(address, "<address>");

/** Creates each object as the tenant admin (namespaced ones in their namespace). */
async function createAsAdmin(
  ...objects: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }[]
) {
  const plural: Record<string, string> = {
    Service: "services",
    EndpointSlice: "endpointslices",
    APIService: "apiservices",
  };
  for (const object of objects) {
    const base = object.apiVersion === "v1" ? "/api/v1" : `/apis/${object.apiVersion}`;
    const scope = object.metadata.namespace ? `/namespaces/${object.metadata.namespace}` : "";
    await kubeRequest(conn, {
      method: "POST",
      path: `${base}${scope}/${plural[object.kind]}`,
      headers: asAdmin,
      body: object,
    });
  }
}

/** The APIService's Available message once it says the wall refused its endpoint. */
function unavailableBecause(name: string): Promise<string> {
  return eventually(async () => {
    const got = await kubeRequest<{ status?: { conditions?: { type: string; message?: string }[] } }>(conn, {
      path: `/apis/apiregistration.k8s.io/v1/apiservices/${name}`,
    });
    const available = got.status?.conditions?.find((condition) => condition.type === "Available");
    return available?.message?.includes("code 403") ? available.message : undefined;
  }, 60_000);
}

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
  await eventually(
    async () => ((await applyTenantDefaults(conn, { tenant, admins: [] })) === undefined ? true : undefined),
    90_000,
  );
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
      const ownApiServer = new URL(conn.server).host;
      const attempts = [
        { group: "live.example.com", address: `127.0.0.1:${live.port}` },
        { group: "closed.example.com", address: `127.0.0.1:${closed}` },
        { group: "other.example.com", address: "127.0.0.2:443" },
        { group: "apiserver.example.com", address: ownApiServer },
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

  it("keeps tenant webhooks off Ring0's own requests", async () => {
    const live = await listener();
    try {
      const name = "ring0s-requests";
      const message = await admissionError(name, `https://127.0.0.1:${live.port}/admit`, async () => {
        // The configuration as stored: Ring0's condition added to the webhook the tenant wrote.
        const stored = await kubeRequest<{
          webhooks: { matchConditions?: { name: string; expression: string }[] }[];
        }>(conn, { path: `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}` });
        expect(stored.webhooks[0]?.matchConditions).toContainEqual({
          name: "ring0-not-ring0",
          expression: "!('system:masters' in request.userInfo.groups)",
        });
        // Ring0 (system:masters) creates what the tenant admin cannot: the webhook never sees it.
        const created = await kubeRequestText(conn, {
          method: "POST",
          path: "/api/v1/namespaces/default/configmaps",
          body: {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { generateName: "c-", labels: { webhook: name } },
          },
        });
        expect(created.status).toBe(201);
      });
      expect(message).toContain("code 403");
      expect(live.connections()).toBe(0);
    } finally {
      live.close();
    }
  });

  it("refuses admission webhook URLs the same way, and the live service sees nothing", async () => {
    const live = await listener();
    try {
      const closed = await closedPort();
      const messages = [
        neutral(
          await admissionError("live", `https://127.0.0.1:${live.port}/admit`),
          "live",
          `127.0.0.1:${live.port}`,
        ),
        neutral(
          await admissionError("closed", `https://127.0.0.1:${closed}/admit`),
          "closed",
          `127.0.0.1:${closed}`,
        ),
      ];
      expect(messages[0]).toMatch(/failed calling webhook .*proxy error .*while dialing <address>, code 403/);
      expect(messages[1]).toBe(messages[0]);
      expect(live.connections()).toBe(0);
    } finally {
      live.close();
    }
  });

  it("refuses an APIService whose endpoint is not one of the tenant's pods, dialling nothing", async () => {
    // An address no pod of this tenant has (the wall refuses it without dialling).
    await createAsAdmin(
      ...serviceAt("default", "evil", { address: "10.244.255.254", port: 443 }),
      apiService("evil.example.com", { namespace: "default", name: "evil", port: 443 }),
    );
    const message = await unavailableBecause("v1.evil.example.com");
    expect(message).toMatch(/proxy error .*while dialing 10\.244\.255\.254:443, code 403/);
    const read = await kubeRequestText(conn, { path: "/apis/evil.example.com/v1", headers: asAdmin });
    expect(read.status).toBe(503);
  });

  it("refuses an APIService whose endpoint is a port on this host, and the listener sees nothing", async () => {
    const live = await listener();
    try {
      // An FQDN slice takes any address text; the API server's endpoint resolver dials it as given.
      await createAsAdmin(
        ...serviceAt("default", "host", { address: "127.0.0.1", port: live.port, addressType: "FQDN" }),
        apiService("host.example.com", { namespace: "default", name: "host", port: 443 }),
      );
      const message = await unavailableBecause("v1.host.example.com");
      expect(message).toContain(`while dialing 127.0.0.1:${live.port}, code 403`);
      expect(live.connections()).toBe(0);
    } finally {
      live.close();
    }
  });

  it("lets tenant admins register APIServices only for groups of their own", async () => {
    const create = (group: string, service: boolean) =>
      kubeRequestText(conn, {
        method: "POST",
        path: "/apis/apiregistration.k8s.io/v1/apiservices",
        headers: asAdmin,
        body: apiService(group, service ? { namespace: "default", name: "evil", port: 443 } : undefined, {
          version: "v9",
        }),
      });
    for (const group of ["apps", "metrics.k8s.io", "networking.k8s.io", "ring0.dev"]) {
      const refused = await create(group, true);
      expect(refused.status, group).toBe(403);
      expect(refused.text).toContain("groups of its own");
    }
    expect((await create("mine.example.com", false)).status).toBe(403);
    // The built-in ones cannot be repointed or removed either.
    const repoint = await kubeRequestText(conn, {
      method: "PATCH",
      path: "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps",
      headers: asAdmin,
      contentType: "application/merge-patch+json",
      body: { spec: { service: { namespace: "default", name: "evil", port: 443 } } },
    });
    expect(repoint.status).toBe(403);
    const remove = await kubeRequestText(conn, {
      method: "DELETE",
      path: "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps",
      headers: asAdmin,
    });
    expect(remove.status).toBe(403);
  });

  it("keeps Ring0's own admission configuration out of tenant admins' reach", async () => {
    // Ring0's policies come from files the API server reads: there is no API object to remove.
    const policies = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
    for (const path of [
      `${policies}/ring0-protect-managed.static.k8s.io`,
      "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/ring0-protect-managed.static.k8s.io",
      "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies/ring0-tenant-webhooks.static.k8s.io",
    ]) {
      const removed = await kubeRequestText(conn, { method: "DELETE", path, headers: asAdmin });
      expect(removed.status, path).toBe(404);
    }
    // And a tenant policy cannot pass itself off as Ring0's (the label is Ring0's alone).
    const posing = await kubeRequestText(conn, {
      method: "POST",
      path: policies,
      headers: asAdmin,
      body: {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicy",
        metadata: { name: "posing", labels: { [protectedLabel]: "true" } },
        spec: {
          matchConstraints: {
            resourceRules: [
              { apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"], operations: ["CREATE"] },
            ],
          },
          validations: [{ expression: "true" }],
        },
      },
    });
    expect(posing.status).toBe(403);
    expect(posing.text).toContain("managed by Ring0");
    // A webhook configuration of Ring0's (as the quota webhook's is) is guarded by the policy.
    const ring0s = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    await kubeRequest(conn, {
      method: "POST",
      path: ring0s,
      body: {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: "ring0-test", labels: { [protectedLabel]: "true" } },
        webhooks: [],
      },
    });
    const removed = await kubeRequestText(conn, {
      method: "DELETE",
      path: `${ring0s}/ring0-test`,
      headers: asAdmin,
    });
    expect(removed.status).toBe(403);
    expect(removed.text).toContain("managed by Ring0");
  });

  it("lets Ring0's own webhook server through, and only it", async () => {
    const ring0 = await listener();
    try {
      setWebhookEndpoint({ baseUrl: `https://127.0.0.1:${ring0.port}`, caBundle: "" });
      const { sockets } = egressPaths(path.join(stateDir, "tenants", tenant));
      const socket = sockets.controlplane;
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
      // Its fan-out is bounded: RING0_WEBHOOK_TUNNELS at once per tenant, the next refused until one closes.
      const holding = net.createServer(() => {});
      await new Promise<void>((resolve) => holding.listen(0, "127.0.0.1", resolve));
      const holdingPort = (holding.address() as net.AddressInfo).port;
      setWebhookEndpoint({ baseUrl: `https://127.0.0.1:${holdingPort}`, caBundle: "" });
      const held = await Promise.all(
        Array.from(
          { length: RING0_WEBHOOK_TUNNELS },
          () =>
            new Promise<net.Socket>((resolve, reject) => {
              const client = net.connect(socket, () =>
                client.write(`CONNECT 127.0.0.1:${holdingPort} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
              );
              client.once("data", (chunk) =>
                chunk.toString().startsWith("HTTP/1.1 200")
                  ? resolve(client)
                  : reject(new Error(chunk.toString())),
              );
              client.on("error", reject);
            }),
        ),
      );
      expect(await answer(`127.0.0.1:${holdingPort}`)).toMatch(/^HTTP\/1\.1 403 /);
      held[0]?.destroy();
      await eventually(
        async () =>
          (await answer(`127.0.0.1:${holdingPort}`)).startsWith("HTTP/1.1 200") ? true : undefined,
        10_000,
      );
      for (const client of held) client.destroy();
      holding.close();
      for (const file of Object.values(sockets)) expect(fs.statSync(file).mode & 0o077).toBe(0);
    } finally {
      setWebhookEndpoint(null);
      ring0.close();
    }
  });
});
