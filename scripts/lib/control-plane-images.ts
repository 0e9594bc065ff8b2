/**
 * The images the `kubernetes` provisioner runs a tenant's control plane from, built here from the
 * binaries tools/kube builds (no registry or container tool is reachable) and pushed into Ring0's
 * own registry under the names the provisioner asks for (registry.k8s.io, which that registry
 * mirrors for real nodes):
 *   registry.k8s.io/etcd:<etcd>-0                    etcd, etcdctl (its health probe), etcdutl
 *   registry.k8s.io/kube-apiserver:v<kube>           kube-apiserver
 *   registry.k8s.io/kube-controller-manager:v<kube>  kube-controller-manager
 * Each is one layer: the static binaries in /usr/local/bin, /etc/passwd and /etc/group naming the
 * one user it runs as (65532, "nonroot", as distroless images), nothing else: no shell, no package
 * manager. They run with a read-only root filesystem (their data and certificates are volumes).
 * ring0-image writes deterministic archives, so the same binaries give the same digests.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { run } from "@/server/cluster/process";

export const NONROOT_USER = "65532:65532";
export const NONROOT_PASSWD = "nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n";
export const NONROOT_GROUP = "nonroot:x:65532:\n";

export interface ControlPlaneImage {
  name: string;
  /** Binaries of tools/kube's bin dir, each at /usr/local/bin/<name>. */
  binaries: string[];
}

/** The control-plane images for these versions ("1.36.4", "3.6.8"). */
export function controlPlaneImages(versions: { kube: string; etcd: string }): ControlPlaneImage[] {
  return [
    { name: `registry.k8s.io/etcd:${versions.etcd}-0`, binaries: ["etcd", "etcdctl", "etcdutl"] },
    { name: `registry.k8s.io/kube-apiserver:v${versions.kube}`, binaries: ["kube-apiserver"] },
    {
      name: `registry.k8s.io/kube-controller-manager:v${versions.kube}`,
      binaries: ["kube-controller-manager"],
    },
  ];
}

/** ring0-image's arguments for `image` (pure). */
export function controlPlaneImageArgs(
  image: ControlPlaneImage,
  inputs: { binDir: string; passwd: string; group: string; out: string },
): string[] {
  return [
    "build",
    "--name",
    image.name,
    "--out",
    inputs.out,
    "--user",
    NONROOT_USER,
    "--env",
    "PATH=/usr/local/bin",
    ...image.binaries.map((binary) => `${path.join(inputs.binDir, binary)}:/usr/local/bin/${binary}:0755`),
    `${inputs.passwd}:/etc/passwd:0644`,
    `${inputs.group}:/etc/group:0644`,
  ];
}

/** The versions of tools/kube's binaries in `binDir`, as they report them. */
export async function binaryVersions(binDir: string): Promise<{ kube: string; etcd: string }> {
  const env = { PATH: "/usr/bin:/bin" };
  const kube = (await run(path.join(binDir, "kube-apiserver"), ["--version"], { env, timeoutMs: 30_000 }))
    .stdout;
  const etcd = (await run(path.join(binDir, "etcd"), ["--version"], { env, timeoutMs: 30_000 })).stdout;
  const kubeVersion = /Kubernetes v(\d+\.\d+\.\d+)/.exec(kube)?.[1];
  const etcdVersion = /etcd Version: (\d+\.\d+\.\d+)/.exec(etcd)?.[1];
  if (!kubeVersion || !etcdVersion)
    throw new Error(
      `cannot read the binaries' versions (kube-apiserver: ${kube.trim()}; etcd: ${etcd.trim()})`,
    );
  return { kube: kubeVersion, etcd: etcdVersion };
}

export interface BuiltImage {
  name: string;
  archive: string;
  /** sha256 of the archive: the same inputs give the same one. */
  sha256: string;
  bytes: number;
}

/**
 * Runs `build` with /etc/passwd and /etc/group files naming the nonroot user, written into
 * `outDir` under `prefix` for the build and removed after it.
 */
export async function withNonrootUser<T>(
  outDir: string,
  prefix: string,
  build: (files: { passwd: string; group: string }) => Promise<T>,
): Promise<T> {
  fs.mkdirSync(outDir, { recursive: true, mode: 0o700 });
  const passwd = path.join(outDir, `${prefix}passwd`);
  const group = path.join(outDir, `${prefix}group`);
  try {
    fs.writeFileSync(passwd, NONROOT_PASSWD);
    fs.writeFileSync(group, NONROOT_GROUP);
    return await build({ passwd, group });
  } finally {
    fs.rmSync(passwd, { force: true });
    fs.rmSync(group, { force: true });
  }
}

/** Runs ring0-image with `args` (which write the archive `out` of image `name`) and hashes the archive. */
export async function writeImage(
  binDir: string,
  name: string,
  out: string,
  args: string[],
  timeoutMs = 5 * 60_000,
): Promise<BuiltImage> {
  await run(path.join(binDir, "ring0-image"), args, {
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
    timeoutMs,
  });
  const bytes = fs.readFileSync(out);
  return {
    name,
    archive: out,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    bytes: bytes.length,
  };
}

/** Builds every control-plane image into `outDir` (one archive each). */
export async function buildControlPlaneImages(options: {
  binDir: string;
  outDir: string;
  log?: (line: string) => void;
}): Promise<BuiltImage[]> {
  const { binDir, outDir } = options;
  const versions = await binaryVersions(binDir);
  return withNonrootUser(outDir, "", async ({ passwd, group }) => {
    const built: BuiltImage[] = [];
    for (const image of controlPlaneImages(versions)) {
      const file = `${image.name.slice(image.name.lastIndexOf("/") + 1).replace(":", "_")}.tar`;
      const out = path.join(outDir, file);
      options.log?.(`building ${image.name}`);
      const args = controlPlaneImageArgs(image, { binDir, passwd, group, out });
      built.push(await writeImage(binDir, image.name, out, args));
    }
    return built;
  });
}
