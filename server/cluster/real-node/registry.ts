/**
 * Ring0's local image registry (distribution v3, built by tools/kube as ring0-registry): one per
 * host, on 127.0.0.1, started with the real nodes and stopped with them; its images stay on disk
 * (<stateDir>/registry/storage) across cluster:down. No public registry is reachable here, so every
 * real node's containerd resolves every registry host to it (hosts.d, see ./configs.ts): `kubectl
 * run web --image=nginx` pulls docker.io/library/nginx from it once an operator has pushed that
 * image with `./ring0 images push <archive>`. Pods cannot reach it (the host's wall drops pod
 * traffic to the host); only containerd on this host and the operator's push do.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { Logger } from "@/server/logger";
import { ensureDaemon, runningDaemon, stopDaemon } from "../daemon";
import { freeLoopbackPorts } from "../ports";
import { run } from "../process";
import {
  containerdHostDir,
  REGISTRY_HOST_PATTERN,
  registryConfig,
  registryHostsToml,
  registryRepositoryHost,
} from "./configs";
import { daemonEnv, writeIfChanged } from "./node";
import { MIRRORED_REGISTRY_HOSTS, type RegistryPlan, registryPlan } from "./plan";

/** The registry's credentials ("ring0:<password>"), made once per host, root-only. */
function credentials(plan: RegistryPlan): string {
  try {
    const text = fs.readFileSync(plan.credentials, "utf8").trim();
    if (/^ring0:[0-9a-f]{64}$/.test(text)) return text;
  } catch {
    // made below
  }
  const text = `ring0:${randomBytes(32).toString("hex")}`;
  fs.writeFileSync(plan.credentials, `${text}\n`, { mode: 0o600 });
  fs.rmSync(plan.htpasswd, { force: true });
  return text;
}

/** The Authorization header value of Ring0's requests to its registry. */
export function registryAuthorization(stateDir: string): string {
  const plan = registryPlan(stateDir);
  return `Basic ${Buffer.from(fs.readFileSync(plan.credentials, "utf8").trim()).toString("base64")}`;
}

/** The registry's htpasswd for the credentials (bcrypt by ring0-registry itself), when missing. */
function ensureHtpasswd(plan: RegistryPlan, binDir: string, pair: string): void {
  if (fs.existsSync(plan.htpasswd)) return;
  const line = execFileSync(path.join(binDir, "ring0-registry"), ["htpasswd"], {
    input: `${pair}\n`,
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } as unknown as NodeJS.ProcessEnv,
    timeout: 30_000,
  }).toString();
  if (!line.startsWith("ring0:$2")) throw new Error("ring0-registry htpasswd gave no bcrypt entry");
  fs.writeFileSync(plan.htpasswd, line, { mode: 0o600 });
}

/** True once the registry answers its API root to Ring0's credentials. */
function registryServes(port: number, authorization: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(
      { host: "127.0.0.1", port, path: "/v2/", headers: { authorization }, timeout: 2_000 },
      (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      },
    );
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolve(false));
  });
}

function registryDaemon(plan: RegistryPlan, binDir: string, port: number, authorization: string) {
  return {
    name: "the image registry serving",
    binary: path.join(binDir, "ring0-registry"),
    args: ["serve", plan.config],
    // No telemetry exporter: nothing is sent anywhere.
    env: { ...daemonEnv(binDir, plan.dir), OTEL_TRACES_EXPORTER: "none", OTEL_SDK_DISABLED: "true" },
    cwd: plan.dir,
    recordFile: plan.record,
    record: { port },
    inputs: [plan.config, plan.htpasswd],
    logFile: path.join(plan.logs, "registry.log"),
    marker: plan.config,
    ready: () => registryServes(port, authorization),
  };
}

/** The upload secret in an existing config (kept, so uploads survive a restart). */
function configuredSecret(plan: RegistryPlan): string | undefined {
  try {
    return /^ {2}secret: "([0-9a-f]{64})"$/m.exec(fs.readFileSync(plan.config, "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

/** The port in an existing config (kept across restarts, so the hosts.toml files stay valid). */
function configuredPort(plan: RegistryPlan): number | undefined {
  try {
    const port = Number(/^ {2}addr: 127\.0\.0\.1:(\d+)$/m.exec(fs.readFileSync(plan.config, "utf8"))?.[1]);
    return port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** Hosts that have a hosts.toml now (the mirrored ones and every host an image was pushed for). */
function hostsWithConfig(plan: RegistryPlan): string[] {
  try {
    return fs
      .readdirSync(plan.hostsDir)
      .filter((dir) => fs.existsSync(path.join(plan.hostsDir, dir, "hosts.toml")));
  } catch {
    return [];
  }
}

/** Writes containerd's hosts.toml for `host` (idempotent; root-only: it holds the credentials). */
export function writeRegistryHost(
  plan: RegistryPlan,
  port: number,
  host: string,
  authorization: string,
): void {
  if (host !== "_default" && !REGISTRY_HOST_PATTERN.test(host)) throw new Error(`bad registry host ${host}`);
  const file = path.join(plan.hostsDir, containerdHostDir(host), "hosts.toml");
  writeIfChanged(file, registryHostsToml(port, host, authorization), 0o600);
  fs.chmodSync(file, 0o600);
}

/** Host names back from containerd's directory names ("localhost_5000_" → "localhost:5000"). */
function hostOfDir(dir: string): string {
  const match = /^(.*)_(\d{1,5})_$/.exec(dir);
  return match ? `${match[1]}:${match[2]}` : dir;
}

/** The registry running on its port, and every hosts.toml pointing at it; resolves with the port. */
export async function ensureRegistry(stateDir: string, binDir: string): Promise<number> {
  const plan = registryPlan(stateDir);
  for (const dir of [plan.dir, plan.storage, plan.hostsDir, plan.logs])
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const port = configuredPort(plan) ?? ((await freeLoopbackPorts(1))[0] as number);
  const secret = configuredSecret(plan) ?? randomBytes(32).toString("hex");
  ensureHtpasswd(plan, binDir, credentials(plan));
  const authorization = registryAuthorization(stateDir);
  writeIfChanged(
    plan.config,
    registryConfig({ port, storage: plan.storage, secret, htpasswd: plan.htpasswd }),
    0o600,
  );
  await ensureDaemon({ ...registryDaemon(plan, binDir, port, authorization), readyTimeoutMs: 30_000 });
  const hosts = new Set<string>([
    ...MIRRORED_REGISTRY_HOSTS,
    "_default",
    ...hostsWithConfig(plan).map(hostOfDir),
  ]);
  for (const host of hosts) writeRegistryHost(plan, port, host, authorization);
  return port;
}

/** Stops the registry (its images stay on disk). */
export async function stopRegistry(stateDir: string, binDir: string): Promise<void> {
  const plan = registryPlan(stateDir);
  await stopDaemon({
    binary: path.join(binDir, "ring0-registry"),
    recordFile: plan.record,
    marker: plan.config,
  });
}

/** The running registry's port, or undefined when it does not run (no real node is up). */
export function runningRegistryPort(stateDir: string, binDir: string): number | undefined {
  const plan = registryPlan(stateDir);
  const pid = runningDaemon({
    binary: path.join(binDir, "ring0-registry"),
    recordFile: plan.record,
    marker: plan.config,
  });
  return pid === undefined ? undefined : configuredPort(plan);
}

export interface PushedImage {
  /** The normalized name pods use (docker.io/library/nginx:latest). */
  name: string;
  repository: string;
  uploaded: number;
  present: number;
  bytes: number;
}

/**
 * Pushes the images of an OCI layout or `docker save` archive into the running registry (ring0-image
 * push), under their own names or `name`, and makes each image's registry host resolve to it.
 */
export async function pushImageArchive(
  stateDir: string,
  binDir: string,
  archive: string,
  options: {
    name?: string;
    /** Replace a tag the registry has with another image. */
    replace?: boolean;
    /** Ring0's own images (localhost/ring0/…), which only Ring0 pushes. */
    ownImages?: boolean;
    logger?: Logger;
  } = {},
): Promise<PushedImage[]> {
  const port = runningRegistryPort(stateDir, binDir);
  if (port === undefined)
    throw new Error(
      "Ring0's image registry is not running: it runs with the real nodes (`npm run cluster:up`, or `./ring0 start`)",
    );
  if (!fs.existsSync(archive)) throw new Error(`${archive} does not exist`);
  const args = ["push", "--registry", `127.0.0.1:${port}`, "--auth-file", registryPlan(stateDir).credentials];
  if (options.name) args.push("--name", options.name);
  if (options.replace) args.push("--replace");
  if (options.ownImages) args.push("--allow-reserved");
  args.push(path.resolve(archive));
  const plan = registryPlan(stateDir);
  const { stdout } = await run(path.join(binDir, "ring0-image"), args, {
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", TMPDIR: plan.dir },
    timeoutMs: 30 * 60_000,
  });
  const pushed: PushedImage[] = [];
  for (const line of stdout.split("\n")) {
    const [word, name, repository, uploaded, present, bytes] = line.trim().split(" ");
    if (word !== "pushed" || !name || !repository) continue;
    pushed.push({
      name,
      repository,
      uploaded: Number(uploaded),
      present: Number(present),
      bytes: Number(bytes),
    });
    const host = name.slice(0, name.indexOf("/"));
    if (registryRepositoryHost(host) !== repository.slice(0, repository.indexOf("/")))
      throw new Error(`ring0-image pushed ${name} to an unexpected repository ${repository}`);
    writeRegistryHost(plan, port, host, registryAuthorization(stateDir));
    options.logger?.info("pushed image", { image: name });
  }
  return pushed;
}

/** Every image the registry has, as names pods use (docker.io/library/nginx:latest). */
export async function listRegistryImages(port: number, authorization: string): Promise<string[]> {
  const get = async (url: string) => {
    const response = await fetch(`http://127.0.0.1:${port}${url}`, {
      headers: { authorization },
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) throw new Error(`the registry answered ${response.status} to ${url}`);
    const next = /<(\/v2\/[^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1];
    return { body: (await response.json()) as Record<string, unknown>, next };
  };
  const repositories: string[] = [];
  // The catalog comes in pages of at most 1000 (the registry's limit), linked by rel="next".
  for (let page: string | undefined = "/v2/_catalog?n=1000"; page; ) {
    const { body, next } = await get(page);
    repositories.push(...((body.repositories as string[] | undefined) ?? []));
    page = next;
  }
  const names: string[] = [];
  for (const repository of repositories) {
    if (repository.startsWith("ring0-unlisted-host/")) continue;
    const tags = ((await get(`/v2/${repository}/tags/list`)).body.tags as string[] | null) ?? [];
    for (const tag of tags.sort()) names.push(`${repository}:${tag}`);
  }
  return names;
}
