/**
 * What a real node changes on this host, made and undone here: its bridge and node IP, its cgroup
 * root, the mounts its kubelet and containerd leave, libcni's cache entries, and the host lock (one
 * local world with real nodes per host: their kube-proxy programs the host's iptables). Every
 * command is an argument array of names this module chose; nothing comes from a tenant.
 */
import fs from "node:fs";
import path from "node:path";
import { CommandError, processesMentioning, run } from "../process";
import { CNI_BIN_DIR, RUNC_PATH } from "./configs";
import type { RealNodePlan } from "./plan";

const CGROUP_ROOT = "/sys/fs/cgroup";
const LOCK_DIR = "/run/ring0";
const LOCK_FILE = path.join(LOCK_DIR, "real-nodes.owner");
const CNI_CACHE = "/var/lib/cni";

/** What a real node needs from the host, with what to do when it is missing; empty when all is there. */
export function realNodePrerequisites(): string[] {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) {
    problems.push(
      "real nodes need root (mounts, network namespaces, cgroups, a bridge): run as root, or start with --real-nodes 0",
    );
  }
  if (!fs.existsSync(RUNC_PATH)) problems.push(`${RUNC_PATH} is missing: apt-get install runc`);
  const plugins = ["bridge", "host-local", "portmap", "loopback"].filter(
    (plugin) => !fs.existsSync(path.join(CNI_BIN_DIR, plugin)),
  );
  if (plugins.length > 0) {
    problems.push(
      `CNI plugins ${plugins.join(", ")} are missing in ${CNI_BIN_DIR}: apt-get install containernetworking-plugins`,
    );
  }
  if (!fs.existsSync("/proc/sys/net/bridge/bridge-nf-call-iptables")) {
    problems.push(
      "br_netfilter is not loaded (no /proc/sys/net/bridge): run 'modprobe br_netfilter'; without it pods on one bridge would bypass the walls between them",
    );
  }
  const packages: Record<string, string> = { ip: "iproute2", ipset: "ipset" };
  for (const tool of [
    "/usr/sbin/iptables",
    "/usr/sbin/iptables-restore",
    "/usr/sbin/ip",
    "/usr/sbin/ipset",
  ]) {
    if (!fs.existsSync(tool) && !fs.existsSync(tool.replace("/usr/sbin/", "/sbin/"))) {
      problems.push(`${tool} is missing: apt-get install ${packages[path.basename(tool)] ?? "iptables"}`);
    }
  }
  if (
    !fs.existsSync(path.join(CGROUP_ROOT, "memory")) &&
    !fs.existsSync(path.join(CGROUP_ROOT, "cgroup.controllers"))
  ) {
    problems.push(`no cgroup hierarchy at ${CGROUP_ROOT}: the kubelet cannot run pods here`);
  }
  return problems;
}

/** How many real nodes a local world gets unless told: one where this host can run it, else none (and why). */
export function defaultRealNodes(): { count: number; problems: string[] } {
  const problems = realNodePrerequisites();
  return { count: problems.length === 0 ? 1 : 0, problems };
}

const sbin = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };

export function runHost(command: string, args: string[], timeoutMs = 30_000) {
  return run(command, args, { env: sbin, timeoutMs });
}

/** Takes the host lock for `stateDir`; throws naming the other local world that holds it. */
export function takeHostLock(stateDir: string): void {
  fs.mkdirSync(LOCK_DIR, { recursive: true, mode: 0o755 });
  let owner: string | undefined;
  try {
    owner = fs.readFileSync(LOCK_FILE, "utf8").trim();
  } catch {
    owner = undefined;
  }
  if (owner && owner !== stateDir && processesMentioning(path.join(owner, "real-nodes")).length > 0) {
    throw new Error(
      `another local world with real nodes runs on this host (state dir ${owner}); one host runs one: stop it (RING0_STATE_DIR=${owner} npm run cluster:down) or use --real-nodes 0`,
    );
  }
  fs.writeFileSync(LOCK_FILE, `${stateDir}\n`, { mode: 0o644 });
}

export function releaseHostLock(stateDir: string): void {
  try {
    if (fs.readFileSync(LOCK_FILE, "utf8").trim() === stateDir) fs.rmSync(LOCK_FILE, { force: true });
    fs.rmdirSync(LOCK_DIR);
  } catch {
    // no lock, or the directory holds something else
  }
}

function linkExists(name: string): boolean {
  return fs.existsSync(path.join("/sys/class/net", name));
}

/**
 * The node's bridge with its own MAC (plan.bridgeMac: never one of its ports', which would change as
 * pods come and go) and its node IP, up (made before the kubelet starts: it serves on that IP).
 */
export async function ensureBridge(plan: RealNodePlan): Promise<void> {
  if (!linkExists(plan.bridge)) {
    await runHost("ip", ["link", "add", plan.bridge, "address", plan.bridgeMac, "type", "bridge"]);
  }
  if (bridgeMacOf(plan.bridge) !== plan.bridgeMac) {
    await runHost("ip", ["link", "set", "dev", plan.bridge, "address", plan.bridgeMac]);
  }
  const { stdout } = await runHost("ip", ["-4", "-o", "addr", "show", "dev", plan.bridge]);
  if (!stdout.includes(` ${plan.nodeIp}/24 `)) {
    await runHost("ip", ["addr", "add", `${plan.nodeIp}/24`, "dev", plan.bridge]);
  }
  await runHost("ip", ["link", "set", plan.bridge, "up"]);
}

/**
 * The bridge's MAC when it was set explicitly (addr_assign_type 3, NET_ADDR_SET), else undefined:
 * only a set address stays when the bridge's ports change.
 */
export function bridgeMacOf(bridge: string): string | undefined {
  const read = (file: string) => fs.readFileSync(path.join("/sys/class/net", bridge, file), "utf8").trim();
  try {
    return read("addr_assign_type") === "3" ? read("address") : undefined;
  } catch {
    return undefined;
  }
}

export async function removeBridge(plan: RealNodePlan): Promise<void> {
  if (linkExists(plan.bridge)) await runHost("ip", ["link", "delete", plan.bridge]);
}

/** The cgroup hierarchies mounted on this host (v1 controllers, the named systemd one, unified). */
function cgroupHierarchies(): string[] {
  const dirs: string[] = [];
  for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const fields = line.split(" ");
    const separator = fields.indexOf("-");
    const type = fields[separator + 1];
    const mountPoint = fields[4];
    if ((type === "cgroup" || type === "cgroup2") && mountPoint?.startsWith(CGROUP_ROOT))
      dirs.push(mountPoint);
  }
  return dirs;
}

/** The kubelet's cgroupRoot in every hierarchy (it refuses a root that does not exist). */
export function ensureCgroupRoot(plan: RealNodePlan): void {
  for (const hierarchy of cgroupHierarchies()) {
    let parent = hierarchy;
    for (const part of plan.cgroupRoot.split("/").filter(Boolean)) {
      const dir = path.join(parent, part);
      fs.mkdirSync(dir, { recursive: true });
      // A new cpuset cgroup has no CPUs or memory nodes: it inherits its parent's.
      for (const file of ["cpuset.cpus", "cpuset.mems"]) {
        const own = path.join(dir, file);
        if (fs.existsSync(own) && fs.readFileSync(own, "utf8").trim() === "") {
          fs.writeFileSync(own, fs.readFileSync(path.join(parent, file), "utf8"));
        }
      }
      parent = dir;
    }
  }
}

function subdirsDepthFirst(dir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return [
    ...entries
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) => subdirsDepthFirst(path.join(dir, entry.name))),
    dir,
  ];
}

/** Pids still in the node's cgroups (its pods' processes), from every hierarchy. */
export function processesInCgroupRoot(plan: RealNodePlan): number[] {
  const pids = new Set<number>();
  for (const hierarchy of cgroupHierarchies()) {
    for (const dir of subdirsDepthFirst(path.join(hierarchy, plan.cgroupRoot))) {
      try {
        for (const pid of fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n")) {
          if (/^\d+$/.test(pid)) pids.add(Number(pid));
        }
      } catch {
        // gone meanwhile
      }
    }
  }
  return [...pids];
}

/** Removes the node's cgroups depth-first in every hierarchy (and /ring0 once empty); returns what stayed. */
export function removeCgroupRoot(plan: RealNodePlan): string[] {
  const left: string[] = [];
  for (const hierarchy of cgroupHierarchies()) {
    for (const dir of subdirsDepthFirst(path.join(hierarchy, plan.cgroupRoot))) {
      try {
        fs.rmdirSync(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") left.push(dir);
      }
    }
    const shared = path.join(hierarchy, plan.cgroupRoot.split("/").filter(Boolean)[0] ?? "");
    try {
      if (shared !== hierarchy) fs.rmdirSync(shared);
    } catch {
      // other nodes' cgroups are still there, or it is gone
    }
  }
  return left;
}

/** Mount points under `dir`, deepest first. */
export function mountsUnder(dir: string): string[] {
  const prefix = `${path.resolve(dir)}/`;
  const points = fs
    .readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .map((point) =>
      point.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8))),
    )
    .filter((point) => point.startsWith(prefix) || `${point}/` === prefix);
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Unmounts everything under `dir` (overlay rootfs, pod netns, kubelet volumes); returns what stayed. */
export async function unmountUnder(dir: string): Promise<string[]> {
  for (let round = 0; round < 3; round++) {
    const points = mountsUnder(dir);
    if (points.length === 0) return [];
    for (const point of points) {
      await runHost("umount", [round < 2 ? "--recursive" : "--lazy", point]).catch((error: unknown) => {
        if (!(error instanceof CommandError)) throw error;
      });
    }
  }
  return mountsUnder(dir);
}

/**
 * libcni's cache entries of the node's pods (/var/lib/cni/results/): its bridge network's and the
 * loopback network's containerd adds, recognised by the pod network namespace under the node's dir.
 */
export function removeCniCache(plan: RealNodePlan): void {
  const results = path.join(CNI_CACHE, "results");
  let entries: string[];
  try {
    entries = fs.readdirSync(results);
  } catch {
    return;
  }
  for (const entry of entries) {
    const file = path.join(results, entry);
    let ours = entry.startsWith(`ring0-${plan.name}-`);
    if (!ours) {
      try {
        const netns = (JSON.parse(fs.readFileSync(file, "utf8")) as { netns?: unknown }).netns;
        ours =
          typeof netns === "string" &&
          (netns.startsWith(`${plan.dir}/`) || netns.startsWith(`${plan.runtimeDir}/`));
      } catch {
        ours = false;
      }
    }
    if (ours) fs.rmSync(file, { force: true });
  }
}
