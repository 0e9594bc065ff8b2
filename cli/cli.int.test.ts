/**
 * The ring0 CLI as a person runs it: a child process (cli/bin.mjs) against a real HTTP server
 * serving Ring0's tRPC handler, with the run's PostgreSQL and super cluster behind it.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/trpc";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb, setDatabaseUrl } from "@/server/db/client";
import { ensureGatewayTls } from "@/server/gateway/tls";
import { deleteObject } from "@/server/k8s/apply";
import { setSuperCluster } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { testSuperCluster } from "@/server/k8s/test-cluster";
import { setGatewayEndpoint } from "@/server/kubeconfigs/gateway-endpoint";
import { createLogger } from "@/server/logger";
import { sharingApiVersion, sharingKind } from "@/server/sharing/types";
import { setControlPlaneDirectory } from "@/server/tenants/control-planes";
import { deleteTenantResource } from "@/server/tenants/tenant-resources";
import { generateToken } from "@/server/tokens/format";
import { createTokenService } from "@/server/tokens/service";
import { signInTenantAdmin, superClusterAccess } from "@/test/integration/control-plane-access";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers, testCaller } from "@/test/integration/trpc";

const bin = path.resolve(__dirname, "bin.mjs");
const tenantName = `cli-${Date.now().toString(36)}`;
/** The quota commands' tenant; the super cluster stands in for its control plane (usage is real). */
const quotaTenant = `cliq-${Date.now().toString(36)}`;
let server: http.Server;
let url: string;
let home: string;
let users: Record<DemoKey, SessionUser>;
const tokens = {} as Record<"operator" | "acmeAdmin" | "acmeMember", { plaintext: string; id: string }>;
const previousPublicUrl = process.env.NEXTAUTH_URL;

/** Node's request → a web Request → tRPC's fetch adapter → back to Node's response. */
async function serveTrpc(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const request = new Request(`${url}${req.url}`, {
    method: req.method,
    headers,
    body: req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks),
  });
  const response = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req: request,
    router: appRouter,
    createContext: () => createContext({ headers: request.headers }),
    onError: () => {},
  });
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
  res.end(Buffer.from(await response.arrayBuffer()));
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `ring0 …` with its own HOME/XDG config dir (one per person), optionally piping stdin. */
function ring0(
  args: string[],
  as: string,
  { input, env = {} }: { input?: string; env?: Record<string, string> } = {},
) {
  return new Promise<Run>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: home,
      env: {
        NODE_ENV: "test",
        PATH: process.env.PATH ?? "",
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, as),
        ...env,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

const configFile = (as: string) => path.join(home, as, "ring0", "config.json");

beforeAll(async () => {
  setDatabaseUrl(await testDatabaseUrl());
  users = await seedDemoUsers(getDb());
  const conn = testSuperCluster();
  await installCrds(conn, createLogger({}, "error"));
  setSuperCluster(conn);
  setControlPlaneDirectory({
    async lookup(tenant) {
      return tenant === quotaTenant
        ? { state: "ready", access: superClusterAccess(conn), version: "1.36" }
        : { state: "absent" };
    },
  });
  server = http.createServer((req, res) => {
    serveTrpc(req, res).catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.NEXTAUTH_URL = url;
  home = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-cli-test-"));
  const service = createTokenService({ db: getDb() });
  const issue = async (user: SessionUser, tenant: string, name: string) => {
    const { plaintext, token } = await service.issueToken({ user, tenant, name, expiresInDays: 1 });
    return { plaintext, id: token.id };
  };
  tokens.operator = await issue(users.operator, "system", "cli operator");
  tokens.acmeAdmin = await issue(users.acmeAdmin, "acme", "cli acme admin");
  tokens.acmeMember = await issue(users.acmeMember, "acme", "cli acme member");
}, 60_000);

afterAll(async () => {
  await deleteTenantResource(tenantName).catch(() => undefined);
  await deleteTenantResource(quotaTenant).catch(() => undefined);
  setControlPlaneDirectory(null);
  setSuperCluster(null);
  await new Promise((resolve) => server?.close(resolve));
  if (previousPublicUrl === undefined) delete process.env.NEXTAUTH_URL;
  else process.env.NEXTAUTH_URL = previousPublicUrl;
  fs.rmSync(home, { recursive: true, force: true });
  // Suites sharing the worker database count tokens per tenant: leave no operator-tenant token behind.
  await getDb().apiToken.deleteMany({ where: { id: tokens.operator.id } });
  await disconnectDb();
});

describe("ring0 login", () => {
  it("refuses a token the server does not accept, storing nothing", async () => {
    const result = await ring0(["login", "--url", url, "--token", generateToken()], "nobody");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ring0: login failed: This API token is not valid.*\n$/);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(fs.existsSync(configFile("nobody"))).toBe(false);

    const malformed = await ring0(["login", "--url", url, "--token", "hunter2"], "nobody");
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/--token: expected a Ring0 API token/);
  });

  it("stores a good token with the URL, readable by the user only", async () => {
    const result = await ring0(
      ["login", "--url", `${url}/`, "--token", tokens.operator.plaintext],
      "operator",
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Logged in to .* as Olivia Operator \(operator, tenant system\)/);
    expect(fs.statSync(configFile("operator")).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(configFile("operator"), "utf8"))).toEqual({
      url,
      token: tokens.operator.plaintext,
    });
  });

  it("reads the token from stdin", async () => {
    const result = await ring0(["login", "--url", url], "acme-admin", {
      input: `${tokens.acmeAdmin.plaintext}\n`,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/as Alice Admin \(tenant-admin, tenant acme\)/);
  });
});

describe("ring0 tenants", () => {
  it("creates, lists and deletes tenants as an operator", async () => {
    const created = await ring0(
      [
        "tenants",
        "create",
        tenantName,
        "--display-name",
        "CLI test",
        "--admin",
        "alice",
        "--provisioner",
        "local",
      ],
      "operator",
    );
    expect(created.stderr).toBe("");
    expect(created).toMatchObject({ code: 0, stdout: `tenant/${tenantName} created\n` });

    const listed = await ring0(["tenants", "list", "-o", "json"], "operator");
    expect(listed.code).toBe(0);
    const tenants = JSON.parse(listed.stdout) as { name: string; displayName: string; version: string }[];
    expect(tenants.find((tenant) => tenant.name === tenantName)).toMatchObject({
      displayName: "CLI test",
      version: "1.36",
    });
    const table = await ring0(["tenants", "list"], "operator");
    expect(table.stdout).toMatch(/^NAME\s+DISPLAY NAME\s+PROVISIONER\s+VERSION\s+PHASE\s+READY\s+AGE\n/);
    expect(table.stdout).toContain(tenantName);

    const unconfirmed = await ring0(["tenants", "delete", tenantName], "operator");
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/without --yes/);
    const deleted = await ring0(["tenants", "delete", tenantName, "--yes"], "operator");
    expect(deleted).toMatchObject({ code: 0, stdout: `tenant/${tenantName} deleted\n` });
  });

  it("refuses tenant admins, with the server's message", async () => {
    const result = await ring0(
      ["tenants", "create", `${tenantName}-x`, "--display-name", "Nope"],
      "acme-admin",
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("ring0: Only cluster operators can do this.\n");
  });

  it("validates input before calling, naming the flag", async () => {
    const result = await ring0(["tenants", "create", "Bad_Name", "--display-name", "x"], "operator");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^ring0: <name>: expected a DNS-1123 label/);
    const missing = await ring0(["tenants", "create", "fine-name"], "operator");
    expect(missing.stderr).toBe("ring0: --display-name: required\n");
  });
});

describe("ring0 tokens", () => {
  it("lists the caller's visible tokens and revokes one", async () => {
    const listed = await ring0(["tokens", "list", "--tenant", "acme", "-o", "json"], "acme-admin");
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout) as { id: string; name: string; revokedAt: string | null }[];
    expect(rows.map((row) => row.id)).toEqual(
      expect.arrayContaining([tokens.acmeAdmin.id, tokens.acmeMember.id]),
    );
    expect(listed.stdout).not.toContain(tokens.acmeMember.plaintext);

    const revoked = await ring0(["tokens", "revoke", tokens.acmeMember.id], "acme-admin");
    expect(revoked).toMatchObject({ code: 0, stdout: expect.stringMatching(/revoked\n$/) });
    const table = await ring0(["tokens", "list"], "acme-admin");
    const line = table.stdout.split("\n").find((row) => row.startsWith(tokens.acmeMember.id));
    expect(line).toMatch(/\brevoked\b/);

    // The revoked token no longer works.
    const refused = await ring0(["tokens", "list"], "member", {
      env: { RING0_URL: url, RING0_TOKEN: tokens.acmeMember.plaintext },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/API token is not valid/);
  });

  it("hides other tenants' tokens as not found", async () => {
    const result = await ring0(["tokens", "list", "--tenant", "globex"], "acme-admin");
    expect(result).toMatchObject({ code: 1, stderr: 'ring0: Tenant "globex" was not found.\n' });
  });
});

describe("ring0 kubeconfig", () => {
  it("writes a private kubeconfig that reaches the tenant through Ring0's gateway", async () => {
    const { caPem = "" } = await ensureGatewayTls({ stateDir: path.join(home, "state") });
    setGatewayEndpoint({ gatewayUrl: "https://localhost:3443", caPem });
    onTestFinished(() => setGatewayEndpoint(null));
    const result = await ring0(
      ["kubeconfig", "acme", "--expires-in-days", "2", "-o", "acme.kubeconfig"],
      "acme-admin",
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const file = path.join(home, "acme.kubeconfig");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const config = load(fs.readFileSync(file, "utf8")) as {
      clusters: { cluster: Record<string, string> }[];
      users: { user: { token: string } }[];
      "current-context": string;
    };
    // The server's kubeconfig, unchanged: Ring0's kube gateway (https) and its CA, not the API URL.
    expect(config.clusters[0]!.cluster).toEqual({
      server: "https://localhost:3443/k8s/tenants/acme",
      "certificate-authority-data": Buffer.from(caPem).toString("base64"),
    });
    expect(config["current-context"]).toBe("acme");
    const verified = await createTokenService({ db: getDb() }).verifyToken(config.users[0]!.user.token);
    expect(verified?.user.id).toBe(users.acmeAdmin.id);

    const stdout = await ring0(["kubeconfig", "acme"], "acme-admin");
    expect(stdout.stdout).toMatch(/^apiVersion: v1\n/);
    const foreign = await ring0(["kubeconfig", "globex"], "acme-admin");
    expect(foreign).toMatchObject({ code: 1, stderr: 'ring0: Tenant "globex" was not found.\n' });
    const bad = await ring0(["kubeconfig", "acme", "--expires-in-days", "0"], "acme-admin");
    expect(bad).toMatchObject({ code: 2, stderr: "ring0: --expires-in-days: expected at least 1 day\n" });
  });
});

describe("ring0 quota", () => {
  it("sets and shows a tenant's quota as an operator, with the server's refusals verbatim", async () => {
    const created = await ring0(
      ["tenants", "create", quotaTenant, "--display-name", "CLI quota"],
      "operator",
    );
    expect(created.code).toBe(0);

    const bad = await ring0(
      ["quota", "set", quotaTenant, "pods=-1", "requests.cpu=1.5.3", "requests.memory=12Xi", "gpus=1"],
      "operator",
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^ring0: Invalid quota — .*Nothing was changed\.\n$/);
    for (const part of [
      "pods: '-1' is negative",
      "'1.5.3' is not a quantity",
      "'12Xi' is not a quantity",
      "unknown resource 'gpus'",
    ])
      expect(bad.stderr).toContain(part);

    const below = await ring0(["quota", "set", quotaTenant, "namespaces=1", "pods=100"], "operator");
    expect(below.code).toBe(1);
    expect(below.stderr).toMatch(/namespaces: used \d+, limit 1\..*--allow-below-usage/);
    const none = await ring0(["quota", "get", quotaTenant], "operator");
    expect(none.stdout).toBe(`Tenant ${quotaTenant} has no quota.\n`);

    const forced = await ring0(
      ["quota", "set", quotaTenant, "namespaces=1", "pods=100", "--allow-below-usage"],
      "operator",
    );
    expect(forced.stderr).toBe("");
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(new RegExp(`^tenant/${quotaTenant} quota set\n`));
    expect(forced.stdout).toMatch(/\nnamespaces +\d+ +1 +over\n/);
    expect(forced.stdout).toMatch(/Warning: over quota: namespaces: used \d+, limit 1\n$/);

    const json = await ring0(["quota", "get", quotaTenant, "-o", "json"], "operator");
    expect(JSON.parse(json.stdout)).toMatchObject({
      tenant: quotaTenant,
      hard: { pods: "100", namespaces: "1" },
      template: null,
      over: [{ resource: "namespaces", limit: "1" }],
    });

    const unknownTemplate = await ring0(["quota", "set", quotaTenant, "--template", "no-such"], "operator");
    expect(unknownTemplate.code).toBe(1);
    expect(unknownTemplate.stderr).toMatch(/quota template "no-such" was not found/);
    const nothing = await ring0(["quota", "set", quotaTenant], "operator");
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/expected --template <name> and\/or resource=quantity/);
    const notPair = await ring0(["quota", "set", quotaTenant, "pods"], "operator");
    expect(notPair).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/"pods": expected resource=quantity/),
    });
  });

  it("refuses tenant admins setting quotas", async () => {
    const result = await ring0(["quota", "set", quotaTenant, "pods=1000"], "acme-admin");
    expect(result).toMatchObject({ code: 1, stderr: "ring0: Only cluster operators can do this.\n" });
  });
});

describe("ring0 share", () => {
  const runId = Date.now().toString(36);
  /** The owner shares with the grantee; the owner's control plane is not needed to grant. */
  const owner = `clis-${runId}`;
  const grantee = `clig-${runId}`;
  const as = {} as Record<"owner" | "grantee", Record<string, string>>;

  beforeAll(async () => {
    for (const [name, displayName] of [
      [owner, "CLI share owner"],
      [grantee, "CLI share grantee"],
    ] as const) {
      await testCaller(users.operator, getDb()).tenants.create({
        name,
        displayName,
        version: "1.36",
        admins: [],
      });
    }
    const service = createTokenService({ db: getDb() });
    for (const [key, tenant] of [
      ["owner", owner],
      ["grantee", grantee],
    ] as const) {
      const admin = await signInTenantAdmin(getDb(), tenant);
      const { plaintext } = await service.issueToken({
        user: admin,
        tenant,
        name: "cli share",
        expiresInDays: 1,
      });
      as[key] = { RING0_URL: url, RING0_TOKEN: plaintext };
    }
  }, 60_000);

  afterAll(async () => {
    await deleteObject(testSuperCluster(), {
      apiVersion: sharingApiVersion,
      kind: sharingKind,
      metadata: { name: `${owner}.debug` },
    }).catch(() => undefined);
    for (const tenant of [owner, grantee]) await deleteTenantResource(tenant).catch(() => undefined);
  });

  it("creates, lists and revokes a grant as the owner's admin; the grantee sees it while it lives", async () => {
    const create = (...flags: string[]) =>
      ring0(["share", "create", owner, "debug", "--to", grantee, "-n", "shared", ...flags], "owner", {
        env: as.owner,
      });
    const typo = await create("--allow", "get,lst:pods", "--for", "7d", "--purpose", "Debug checkout");
    expect(typo).toMatchObject({
      code: 2,
      stderr:
        'ring0: --allow "get,lst:pods": unknown verb "lst"; use get, list, watch, create, update, patch, delete, deletecollection\n',
    });
    const secrets = await create("--allow", "get:secrets", "--for", "7d", "--purpose", "Debug checkout");
    // The server's refusal as it is, on one line, naming the policy rule the grant breaks.
    expect(secrets.code).toBe(1);
    expect(secrets.stderr).toMatch(
      /^ring0: The grant breaks the sharing policy: rule 1: "secrets" is not shareable [^\n]*\(deniedResources\)\.\n$/,
    );
    const forever = await create("--allow", "read-pods", "--purpose", "Debug checkout");
    expect(forever.code).toBe(1);
    expect(forever.stderr).toMatch(
      /^ring0: .*set an expiry: grants may last at most 90 days.*\(maxExpiryDays\)/,
    );

    const created = await create(
      "--allow",
      "read-pods",
      "--allow",
      "logs",
      "--for",
      "7d",
      "--purpose",
      "Debug checkout together",
    );
    expect(created.stderr).toBe("");
    expect(created).toMatchObject({ code: 0, stdout: `grant ${owner}.debug created (active now)\n` });

    const table = await ring0(["share", "list", owner], "owner", { env: as.owner });
    expect(table.stdout).toMatch(/^NAME +GRANTEES +WHAT +EXPIRES +STATE +LAST USED\n/);
    expect(table.stdout).toMatch(
      new RegExp(
        `\\ndebug +${grantee} +get,list,watch pods in shared; get pods/log in shared +\\S+Z +Active +never\\n`,
      ),
    );
    const json = await ring0(["share", "list", owner, "-o", "json"], "owner", { env: as.owner });
    const [grant] = JSON.parse(json.stdout) as { shortName: string; expiresAt: string; purpose: string }[];
    expect(grant).toMatchObject({
      shortName: "debug",
      purpose: "Debug checkout together",
      grantees: [{ tenant: grantee }],
      rules: [
        { namespaces: ["shared"], apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
        { namespaces: ["shared"], apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
      ],
    });
    expect(Math.abs(new Date(grant!.expiresAt).getTime() - Date.now() - 7 * 86_400_000)).toBeLessThan(60_000);

    // The grantee's side: what is shared with them, and nothing of the owner's own list.
    await expect
      .poll(
        async () =>
          (await ring0(["share", "list", "--shared-with-me"], "grantee", { env: as.grantee })).stdout,
        {
          timeout: 10_000,
        },
      )
      .toMatch(new RegExp(`\\nCLI share owner \\(${owner}\\) +debug +get,list,watch pods in shared;`));
    const notTheirs = await ring0(["share", "list", owner], "grantee", { env: as.grantee });
    expect(notTheirs).toMatchObject({ code: 1, stderr: `ring0: Tenant "${owner}" was not found.\n` });
    const noGrantingOn = await ring0(["share", "revoke", owner, "debug"], "grantee", { env: as.grantee });
    expect(noGrantingOn).toMatchObject({ code: 1, stderr: `ring0: Tenant "${owner}" was not found.\n` });

    const revoked = await ring0(["share", "revoke", owner, "debug"], "owner", { env: as.owner });
    expect(revoked).toMatchObject({ code: 0, stdout: `grant ${owner}.debug revoked\n` });
    const after = await ring0(["share", "list", owner], "owner", { env: as.owner });
    expect(after.stdout).toMatch(/\ndebug .* Revoked +never\n/);
    await expect
      .poll(
        async () =>
          (await ring0(["share", "list", "--shared-with-me"], "grantee", { env: as.grantee })).stdout,
        {
          timeout: 10_000,
        },
      )
      .toBe("No other tenant shares anything with you.\n");
    const missing = await ring0(["share", "revoke", owner, "nope"], "owner", { env: as.owner });
    expect(missing).toMatchObject({
      code: 1,
      stderr: `ring0: Tenant "${owner}" has no grant named "nope".\n`,
    });
  }, 90_000);
});
