/**
 * The local provisioner against real processes: kwokctl clusters (etcd, kube-apiserver,
 * kube-controller-manager) per tenant in a temporary state dir, from the cached binaries.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { isListening } from "@/server/cluster/ports";
import { killProcessesMentioning, processesMentioning, run, waitExited } from "@/server/cluster/process";
import { type ClusterConnection, connectCluster } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import {
  type ControlPlaneObservation,
  ControlPlaneSpecError,
  kubeconfigFromAccess,
  type Provisioner,
} from "../types";
import { createLocalProvisioner } from ".";

const logger = createLogger({}, "error");
/** The version the cached binaries are (kube-apiserver --version: "Kubernetes v1.36.4"). */
let version = "";
/** Another version on the same binaries, to exercise a version change. */
const aliasVersion = "1.99.0";
let stateDir = "";
let versions: Record<string, string> = {};
let provisioner: Provisioner;

const tenantDir = (tenant: string) => path.join(stateDir, "tenants", tenant);
const processesOf = (tenant: string) => processesMentioning(`${tenantDir(tenant)}/`);

const portOf = (observation: ControlPlaneObservation) => Number(new URL(observation.endpoint ?? "").port);

async function running(tenant: string, using = provisioner): Promise<ControlPlaneObservation> {
  return eventually(async () => {
    const observation = await using.observe(tenant);
    return observation.phase === "Running" ? observation : undefined;
  }, 60_000);
}

async function connect(tenant: string, using = provisioner): Promise<ClusterConnection> {
  const access = await using.access(tenant);
  if (!access) throw new Error(`no access to ${tenant}`);
  return connectCluster(`test-${tenant}`, { inline: kubeconfigFromAccess(access, tenant) });
}

const configMapPath = (name: string) => `/api/v1/namespaces/default/configmaps/${name}`;

async function createConfigMap(conn: ClusterConnection, name: string) {
  await kubeRequest(conn, {
    method: "POST",
    path: "/api/v1/namespaces/default/configmaps",
    body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { tenant: conn.name } },
    timeoutMs: 10_000,
  });
}

async function hasConfigMap(conn: ClusterConnection, name: string): Promise<boolean> {
  try {
    await kubeRequest(conn, { path: configMapPath(name), timeoutMs: 10_000 });
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-local-provisioner-"));
  const binDir = await kubeBinaries(logger, { build: false });
  const printed = await run(path.join(binDir, "kube-apiserver"), ["--version"], { timeoutMs: 30_000 });
  version = /v(\d+\.\d+\.\d+)/.exec(printed.stdout)?.[1] ?? "";
  expect(version).not.toBe("");
  versions = { [version]: binDir, [aliasVersion]: binDir };
  // Ring0's default GOGC (25) unless told.
  provisioner = createLocalProvisioner({ stateDir, logger, versions });
});

/** GOGC in the environment of each of the tenant's running components, from /proc. */
function goGcOf(tenant: string): Record<string, string | undefined> {
  const found: Record<string, string | undefined> = {};
  for (const pid of processesOf(tenant)) {
    try {
      const command = path.basename(fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "");
      if (!["etcd", "kube-apiserver", "kube-controller-manager"].includes(command)) continue;
      const environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      found[command] = environ.find((entry) => entry.startsWith("GOGC="))?.slice("GOGC=".length);
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

afterAll(async () => {
  try {
    for (const tenant of await provisioner.list()) await provisioner.destroy(tenant);
  } finally {
    await killProcessesMentioning(`${stateDir}/`);
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}, 60_000);

describe("the local provisioner", { timeout: 90_000 }, () => {
  it("creates two tenants concurrently: both run, answer with admin access, and are distinct", async () => {
    const created = await Promise.all(
      ["alpha", "beta"].map((tenant) => provisioner.ensure({ tenant, version, suspended: false })),
    );
    for (const observation of created) expect(["Starting", "Running"]).toContain(observation.phase);

    const [alpha, beta] = await Promise.all([running("alpha"), running("beta")]);
    expect(alpha.version).toBe(`v${version}`);
    expect(alpha.endpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(alpha.endpoint).not.toBe(beta.endpoint);

    const [alphaConn, betaConn] = await Promise.all([connect("alpha"), connect("beta")]);
    for (const conn of [alphaConn, betaConn]) {
      const namespaces = await kubeRequest<{ items: { metadata: { name: string } }[] }>(conn, {
        path: "/api/v1/namespaces",
        timeoutMs: 10_000,
      });
      expect(namespaces.items.map((namespace) => namespace.metadata.name)).toContain("default");
    }
    await createConfigMap(alphaConn, "only-in-alpha");
    await createConfigMap(betaConn, "only-in-beta");
    expect(await hasConfigMap(alphaConn, "only-in-alpha")).toBe(true);
    expect(await hasConfigMap(betaConn, "only-in-alpha")).toBe(false);
    expect(await provisioner.list()).toEqual(["alpha", "beta"]);
  });

  it("suspends to Stopped with no processes and a closed port, and resumes with the data", async () => {
    const before = await provisioner.observe("alpha");
    const stopped = await provisioner.ensure({ tenant: "alpha", version, suspended: true });
    expect(stopped.phase).toBe("Stopped");
    expect(processesOf("alpha")).toEqual([]);
    expect(await isListening(portOf(before))).toBe(false);
    expect((await provisioner.observe("alpha")).phase).toBe("Stopped");
    // Suspending again changes nothing.
    expect((await provisioner.ensure({ tenant: "alpha", version, suspended: true })).phase).toBe("Stopped");

    const resumed = await provisioner.ensure({ tenant: "alpha", version, suspended: false });
    expect(["Starting", "Running"]).toContain(resumed.phase);
    await running("alpha");
    expect(await hasConfigMap(await connect("alpha"), "only-in-alpha")).toBe(true);
  });

  it("is adopted by a fresh provisioner over the same state dir", async () => {
    const adopter = createLocalProvisioner({ stateDir, logger, versions });
    const observed = await running("alpha", adopter);
    expect(observed.endpoint).toBe((await provisioner.observe("alpha")).endpoint);
    expect(await hasConfigMap(await connect("alpha", adopter), "only-in-alpha")).toBe(true);
    expect(await adopter.list()).toEqual(["alpha", "beta"]);
    // Ensuring what runs adopts it: same processes, nothing restarted.
    const pids = processesOf("alpha").sort();
    expect((await adopter.ensure({ tenant: "alpha", version, suspended: false })).phase).toBe("Running");
    expect(processesOf("alpha").sort()).toEqual(pids);
  });

  it("runs every component with its GOGC, and restarts onto another one, keeping the data", async () => {
    expect(goGcOf("alpha")).toEqual({ etcd: "25", "kube-apiserver": "25", "kube-controller-manager": "25" });
    const retuned = createLocalProvisioner({ stateDir, logger, versions, goGc: 60 });
    await retuned.ensure({ tenant: "alpha", version, suspended: false });
    await running("alpha", retuned);
    expect(goGcOf("alpha")).toEqual({ etcd: "60", "kube-apiserver": "60", "kube-controller-manager": "60" });
    expect(await hasConfigMap(await connect("alpha", retuned), "only-in-alpha")).toBe(true);
    // Back to the suite's own setting (the next tests' provisioner).
    await provisioner.ensure({ tenant: "alpha", version, suspended: false });
    await running("alpha");
    expect(goGcOf("alpha")["kube-apiserver"]).toBe("25");
  });

  it("moves to new ports when something took a recorded one while stopped", async () => {
    const before = await provisioner.observe("beta");
    await provisioner.ensure({ tenant: "beta", version, suspended: true });
    const squatter = net.createServer();
    await new Promise<void>((resolve) =>
      squatter.listen({ host: "127.0.0.1", port: portOf(before) }, resolve),
    );
    try {
      await provisioner.ensure({ tenant: "beta", version, suspended: false });
      const after = await running("beta");
      expect(after.endpoint).not.toBe(before.endpoint);
      expect(await hasConfigMap(await connect("beta"), "only-in-beta")).toBe(true);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it("changes version by restarting on the version's binaries, keeping the data", async () => {
    const pids = processesOf("alpha").sort();
    expect(pids.length).toBeGreaterThan(0);
    await provisioner.ensure({ tenant: "alpha", version: aliasVersion, suspended: false });
    await running("alpha");
    const restarted = processesOf("alpha");
    expect(restarted.length).toBeGreaterThan(0);
    for (const pid of restarted) expect(pids).not.toContain(pid);
    const record = JSON.parse(fs.readFileSync(path.join(tenantDir("alpha"), "ring0.json"), "utf8"));
    expect(record.version).toBe(aliasVersion);
    expect(await hasConfigMap(await connect("alpha"), "only-in-alpha")).toBe(true);
  });

  it("reports a component that died as Failed, naming it and its log, and ensure restarts it", async () => {
    const apiserver = processesOf("beta").filter((pid) =>
      fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]?.endsWith("/kube-apiserver"),
    );
    expect(apiserver).toHaveLength(1);
    process.kill(apiserver[0] ?? 0, "SIGKILL");
    await waitExited(apiserver);
    const failed = await provisioner.observe("beta");
    expect(failed.phase).toBe("Failed");
    expect(failed.message).toContain(
      `kube-apiserver exited (see ${tenantDir("beta")}/clusters/ring0-beta/logs/kube-apiserver.log`,
    );
    await provisioner.ensure({ tenant: "beta", version, suspended: false });
    await running("beta");
    expect(await hasConfigMap(await connect("beta"), "only-in-beta")).toBe(true);
  });

  it("refuses an unknown version with a ControlPlaneSpecError naming the available ones", async () => {
    const attempt = provisioner.ensure({ tenant: "alpha", version: "1.12", suspended: false });
    await expect(attempt).rejects.toBeInstanceOf(ControlPlaneSpecError);
    await expect(attempt).rejects.toThrow(new RegExp(`${aliasVersion.replaceAll(".", "\\.")}, ${version}`));
    await expect(provisioner.ensure({ tenant: "../etc", version, suspended: false })).rejects.toBeInstanceOf(
      ControlPlaneSpecError,
    );
  });

  it("cleans a half-created tenant and creates it again (suspended: created, then stopped)", async () => {
    fs.mkdirSync(tenantDir("gamma"), { recursive: true });
    fs.writeFileSync(path.join(tenantDir("gamma"), "ring0.json"), "{}");
    expect((await provisioner.observe("gamma")).phase).toBe("Failed");
    const observed = await provisioner.ensure({ tenant: "gamma", version, suspended: true });
    expect(observed.phase).toBe("Stopped");
    expect(processesOf("gamma")).toEqual([]);
    expect(await provisioner.access("gamma")).toMatchObject({ ca: expect.stringContaining("CERTIFICATE") });
  });

  it("destroys everything, and destroying again is a no-op", async () => {
    const ports = await Promise.all(
      ["alpha", "beta"].map(async (tenant) => portOf(await provisioner.observe(tenant))),
    );
    await Promise.all(["alpha", "beta", "gamma"].map((tenant) => provisioner.destroy(tenant)));
    for (const tenant of ["alpha", "beta", "gamma"]) {
      expect(await provisioner.observe(tenant)).toEqual({ phase: "Absent" });
      expect(await provisioner.access(tenant)).toBeUndefined();
      expect(processesOf(tenant)).toEqual([]);
      expect(fs.existsSync(tenantDir(tenant))).toBe(false);
    }
    for (const port of ports) expect(await isListening(port)).toBe(false);
    expect(await provisioner.list()).toEqual([]);
    await provisioner.destroy("alpha");
    expect(await provisioner.observe("alpha")).toEqual({ phase: "Absent" });
  });
});
