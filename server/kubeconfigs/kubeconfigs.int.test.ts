/**
 * Kubeconfig issuing end to end: the service, the tRPC procedure and the two route handlers (called
 * with a web Request, the session cookie a real next-auth JWT). The break-glass kubeconfig is
 * proven against the run's super cluster with the real kubectl.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { load } from "js-yaml";
import { encode } from "next-auth/jwt";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { POST as postAdminKubeconfig } from "@/app/api/tenants/[tenant]/admin-kubeconfig/route";
import { POST as postKubeconfig } from "@/app/api/tenants/[tenant]/kubeconfig/route";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb, setDatabaseUrl } from "@/server/db/client";
import { env } from "@/server/env";
import { ensureGatewayTls } from "@/server/gateway/tls";
import { setGatewayEndpoint } from "@/server/kubeconfigs/gateway-endpoint";
import { createKubeconfigService } from "@/server/kubeconfigs/service";
import type { ControlPlaneAccess } from "@/server/provisioners/types";
import { type ControlPlaneLookup, setControlPlaneDirectory } from "@/server/tenants/control-planes";
import { createTokenService } from "@/server/tokens/service";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers, testCaller, trpcOutcome } from "@/test/integration/trpc";

const run = promisify(execFile);
const secret = "kubeconfig-test-secret-kubeconfig-test-0123";
let users: Record<DemoKey, SessionUser>;
let origin: string;
let superAccess: ControlPlaneAccess;
let tmp: string;

interface Kubeconfig {
  clusters: { name: string; cluster: Record<string, string> }[];
  users: { name: string; user: Record<string, string> }[];
  "current-context": string;
}

/** The run's super cluster as admin access, reading the files its kubeconfig references. */
function accessFromKubeconfig(file: string): ControlPlaneAccess {
  const config = load(fs.readFileSync(file, "utf8")) as Kubeconfig;
  const base = path.dirname(file);
  const pem = (entry: Record<string, string>, key: string) => {
    if (entry[`${key}-data`]) return Buffer.from(entry[`${key}-data`]!, "base64").toString("utf8");
    return fs.readFileSync(path.resolve(base, entry[key]!), "utf8");
  };
  const cluster = config.clusters[0]!.cluster;
  const user = config.users[0]!.user;
  return {
    server: cluster.server!,
    ca: pem(cluster, "certificate-authority"),
    cert: pem(user, "client-certificate"),
    key: pem(user, "client-key"),
  };
}

function installDirectory(states: Record<string, ControlPlaneLookup>) {
  setControlPlaneDirectory({ lookup: async (tenant) => states[tenant] ?? { state: "absent" } });
}

async function cookieFor(user: SessionUser): Promise<string> {
  const jwt = await encode({
    token: { uid: user.id, subject: user.subject, name: user.name, tenant: user.tenant, role: user.role },
    secret,
  });
  return `next-auth.session-token=${jwt}`;
}

async function post(
  handler: typeof postKubeconfig,
  tenant: string,
  fields: Record<string, string>,
  { user, from = origin }: { user?: SessionUser; from?: string | null } = {},
): Promise<Response> {
  const headers = new Headers({ "content-type": "application/x-www-form-urlencoded" });
  if (from) headers.set("origin", from);
  if (user) headers.set("cookie", await cookieFor(user));
  const request = new Request(`${origin}/api/tenants/${tenant}/kubeconfig`, {
    method: "POST",
    headers,
    body: new URLSearchParams(fields).toString(),
  });
  return handler(request, { params: Promise.resolve({ tenant }) });
}

async function auditEvents(action: string, tenant: string) {
  return getDb().auditEvent.findMany({ where: { action, tenant }, orderBy: { at: "asc" } });
}

beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = secret;
  setDatabaseUrl(await testDatabaseUrl());
  users = await seedDemoUsers(getDb());
  origin = env().allowedOrigins[0]!;
  superAccess = accessFromKubeconfig(inject("superKubeconfig"));
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-kubeconfig-test-"));
});

afterEach(() => {
  setControlPlaneDirectory(null);
  setGatewayEndpoint(null);
});

afterAll(async () => {
  fs.rmSync(tmp, { recursive: true, force: true });
  await disconnectDb();
});

describe("issueKubeconfig", () => {
  it("issues a token for the tenant, renders it, and audits without the secret", async () => {
    const service = createKubeconfigService({
      db: getDb(),
      gateway: { gatewayUrl: "https://ring0.example.com" },
    });
    const file = await service.issueKubeconfig({
      user: users.acmeMember,
      tenant: "acme",
      expiresInDays: 7,
      requestId: "kc-issue-1",
    });
    expect(file.filename).toBe("acme.kubeconfig");
    const config = load(file.kubeconfig) as Kubeconfig;
    expect(config.clusters[0]!.cluster).toEqual({ server: "https://ring0.example.com/k8s/tenants/acme" });
    const token = config.users[0]!.user.token!;
    const verified = await createTokenService({ db: getDb() }).verifyToken(token);
    expect(verified?.user.id).toBe(users.acmeMember.id);
    expect(verified?.token).toMatchObject({ tenant: "acme" });
    expect(verified?.token.name).toMatch(/^kubeconfig \d{4}-\d{2}-\d{2}$/);

    const [event] = (await auditEvents("kubeconfig.issue", "acme")).filter(
      (e) => e.requestId === "kc-issue-1",
    );
    expect(event).toMatchObject({
      actorName: "Adam Member",
      result: "success",
      target: verified!.token.prefix,
    });
    expect(JSON.stringify(event)).not.toContain(token);
  });

  it("names the token when asked, and refuses other tenants and bad lifetimes", async () => {
    const service = createKubeconfigService({ db: getDb() });
    const file = await service.issueKubeconfig({
      user: users.acmeAdmin,
      tenant: "acme",
      expiresInDays: 1,
      name: "ci runner",
    });
    const token = (load(file.kubeconfig) as Kubeconfig).users[0]!.user.token!;
    expect((await createTokenService({ db: getDb() }).verifyToken(token))?.token.name).toBe("ci runner");
    await expect(
      service.issueKubeconfig({ user: users.acmeAdmin, tenant: "globex", expiresInDays: 1 }),
    ).rejects.toThrow(/Tenant "globex" was not found/);
    await expect(
      service.issueKubeconfig({ user: users.acmeAdmin, tenant: "acme", expiresInDays: 0 }),
    ).rejects.toThrow(/expiresInDays/);
  });

  it("points at the gateway endpoint the runtime set, with its CA; else the configured gateway URL", async () => {
    const tls = await ensureGatewayTls({ stateDir: tmp });
    setGatewayEndpoint({ gatewayUrl: "https://localhost:3443", caPem: tls.caPem });
    const service = createKubeconfigService({ db: getDb() });
    const withCa = load(
      (await service.issueKubeconfig({ user: users.acmeAdmin, tenant: "acme", expiresInDays: 1 })).kubeconfig,
    ) as Kubeconfig;
    expect(withCa.clusters[0]!.cluster).toEqual({
      server: "https://localhost:3443/k8s/tenants/acme",
      "certificate-authority-data": Buffer.from(tls.caPem!).toString("base64"),
    });
    setGatewayEndpoint(null);
    const fallback = load(
      (await service.issueKubeconfig({ user: users.acmeAdmin, tenant: "acme", expiresInDays: 1 })).kubeconfig,
    ) as Kubeconfig;
    expect(fallback.clusters[0]!.cluster).toEqual({ server: `${env().gatewayUrl}/k8s/tenants/acme` });
    expect(env().gatewayUrl).toMatch(/^https:\/\//);
  });
});

describe("kubeconfigs.issue (tRPC)", () => {
  it("serves members and operators, and hides other tenants", async () => {
    const member = await testCaller(users.acmeMember, getDb()).kubeconfigs.issue({
      tenant: "acme",
      expiresInDays: 3,
    });
    expect(member.filename).toBe("acme.kubeconfig");
    expect(member.kubeconfig).toContain("/k8s/tenants/acme");
    const operator = await testCaller(users.operator, getDb()).kubeconfigs.issue({ tenant: "globex" });
    expect(operator.kubeconfig).toContain("/k8s/tenants/globex");
    expect(
      (await trpcOutcome(testCaller(users.acmeMember, getDb()).kubeconfigs.issue({ tenant: "globex" })))[0],
    ).toBe("NOT_FOUND");
    const [code, message] = await trpcOutcome(
      testCaller(users.acmeMember, getDb()).kubeconfigs.issue({ tenant: "acme", expiresInDays: 1000 }),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toMatch(/expiresInDays/);
  });
});

describe("POST /api/tenants/[tenant]/kubeconfig", () => {
  it("downloads a kubeconfig for a member, never cached", async () => {
    const response = await post(postKubeconfig, "acme", { expiresInDays: "5" }, { user: users.acmeMember });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-disposition")).toBe('attachment; filename="acme.kubeconfig"');
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("content-type")).toBe("application/yaml");
    const config = load(await response.text()) as Kubeconfig;
    expect(config.clusters[0]!.cluster.server).toBe(`${env().gatewayUrl}/k8s/tenants/acme`);
    expect(config["current-context"]).toBe("acme");
  });

  it("refuses foreign origins, anonymous callers, non-members and bad input", async () => {
    const fields = { expiresInDays: "5" };
    const foreign = await post(postKubeconfig, "acme", fields, {
      user: users.acmeMember,
      from: "https://evil.example",
    });
    expect(foreign.status).toBe(403);
    expect((await post(postKubeconfig, "acme", fields, { user: users.acmeMember, from: null })).status).toBe(
      403,
    );
    const anonymous = await post(postKubeconfig, "acme", fields);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toMatch(/Sign in/);
    const outsider = await post(postKubeconfig, "acme", fields, { user: users.globexAdmin });
    expect(outsider.status).toBe(404);
    expect((await post(postKubeconfig, "nope", fields, { user: users.acmeMember })).status).toBe(404);
    for (const expiresInDays of ["0", "366", "soon", "1.5"]) {
      const bad = await post(postKubeconfig, "acme", { expiresInDays }, { user: users.acmeMember });
      expect(bad.status, expiresInDays).toBe(400);
      expect(await bad.text()).toMatch(/^Invalid input — expiresInDays: /);
    }
  });
});

describe("POST /api/tenants/[tenant]/admin-kubeconfig (break-glass)", () => {
  it("gives operators a working admin kubeconfig as a download and audits the reason", async () => {
    installDirectory({ acme: { state: "ready", access: superAccess } });
    const reason = "INC-42: the syncer is stuck, inspecting leases";
    const response = await post(postAdminKubeconfig, "acme", { reason }, { user: users.operator });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-disposition")).toBe('attachment; filename="acme.kubeconfig"');
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("content-type")).toBe("application/yaml");
    const text = await response.text();
    const file = path.join(tmp, "admin.kubeconfig");
    fs.writeFileSync(file, text, { mode: 0o600 });

    const kubectl = path.join((await binDir()).trim(), "kubectl");
    const { stdout } = await run(kubectl, ["--kubeconfig", file, "get", "ns", "-o", "name"]);
    expect(stdout).toContain("namespace/kube-system");

    const events = await auditEvents("kubeconfig.admin-issue", "acme");
    const event = events.at(-1)!;
    expect(event).toMatchObject({ actorName: "Olivia Operator", result: "success" });
    expect(event.detail).toMatchObject({ reason });
    expect(JSON.stringify(event)).not.toContain(Buffer.from(superAccess.key).toString("base64"));
    expect(JSON.stringify(event)).not.toContain("PRIVATE KEY");
  });

  it("is not found for non-operators and unknown tenants; says when the control plane is not ready", async () => {
    installDirectory({
      acme: { state: "ready", access: superAccess },
      globex: { state: "unavailable", phase: "Provisioning", message: "kube-apiserver is starting" },
    });
    const reason = { reason: "checking things" };
    expect((await post(postAdminKubeconfig, "acme", reason, { user: users.acmeAdmin })).status).toBe(404);
    expect((await post(postAdminKubeconfig, "ghost", reason, { user: users.operator })).status).toBe(404);
    const notReady = await post(postAdminKubeconfig, "globex", reason, { user: users.operator });
    expect(notReady.status).toBe(409);
    expect(await notReady.text()).toMatch(/not ready \(phase Provisioning\): kube-apiserver is starting/);
    setControlPlaneDirectory(null);
    const noDirectory = await post(postAdminKubeconfig, "acme", reason, { user: users.operator });
    expect(noDirectory.status).toBe(503);
  });

  it("requires a reason of 3 to 500 characters and an allowed Origin", async () => {
    installDirectory({ acme: { state: "ready", access: superAccess } });
    for (const fields of [{}, { reason: "no" }, { reason: "x".repeat(501) }] as Record<string, string>[]) {
      const response = await post(postAdminKubeconfig, "acme", fields, { user: users.operator });
      expect(response.status).toBe(400);
      expect(await response.text()).toMatch(/reason: /);
    }
    const foreign = await post(
      postAdminKubeconfig,
      "acme",
      { reason: "legit reason" },
      { user: users.operator, from: "https://evil.example" },
    );
    expect(foreign.status).toBe(403);
  });
});

async function binDir(): Promise<string> {
  const { stdout } = await run("bash", ["scripts/kube-build.sh", "--print-dir"]);
  return stdout.trim().split("\n").at(-1)!;
}
