/**
 * The images every real node has from the start, built here (ring0-image, no registry, no network)
 * and imported into the node's containerd (k8s.io namespace, where the kubelet finds them):
 *   localhost/ring0/pause:1     the sandbox image containerd pins
 *   localhost/ring0/toolbox:1   busybox (Debian's busybox-static) for shells and tests
 *   localhost/ring0/httpd:1     a small HTTP server (port 8080, /healthz)
 *   localhost/ring0/kubectl:1   the toolbox with tools/kube's kubectl at /bin/kubectl (ENTRYPOINT
 *                               kubectl): a tenant pod's in-cluster client of its own API server
 * Archives are deterministic (same binary and busybox → same bytes) and rebuilt when ring0-image is
 * newer than them.
 */
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "@/server/logger";
import { run } from "../process";
import { BUSYBOX_PATHS } from "../sim-kubelet";
import {
  HTTPD_IMAGE,
  KUBECTL_IMAGE,
  PAUSE_IMAGE,
  type RealNodePlan,
  realNodesDir,
  TOOLBOX_IMAGE,
} from "./plan";

export const NODE_IMAGES = [
  { name: PAUSE_IMAGE, kind: "pause", file: "pause.tar" },
  { name: TOOLBOX_IMAGE, kind: "toolbox", file: "toolbox.tar" },
  { name: HTTPD_IMAGE, kind: "httpd", file: "httpd.tar" },
  { name: KUBECTL_IMAGE, kind: "kubectl", file: "kubectl.tar" },
] as const;

const plainEnv = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };

/** The image archives for real nodes, built when missing or older than ring0-image; resolves with their paths. */
export async function ensureImageArchives(stateDir: string, binDir: string): Promise<string[]> {
  const tool = path.join(binDir, "ring0-image");
  if (!fs.existsSync(tool)) throw new Error(`${tool} is missing: run \`npm run kube:build\``);
  const dir = path.join(realNodesDir(stateDir), "images");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const kubectl = path.join(binDir, "kubectl");
  // An archive is rebuilt when ring0-image (or, for the kubectl image, kubectl) is newer than it.
  const inputsTime = Math.max(
    fs.statSync(tool).mtimeMs,
    fs.existsSync(kubectl) ? fs.statSync(kubectl).mtimeMs : 0,
  );
  const archives: string[] = [];
  for (const image of NODE_IMAGES) {
    const out = path.join(dir, image.file);
    const fresh = fs.existsSync(out) && fs.statSync(out).mtimeMs >= inputsTime;
    if (!fresh) {
      const busybox = () => {
        const found = BUSYBOX_PATHS.find((candidate) => fs.existsSync(candidate));
        if (!found)
          throw new Error("busybox is missing for the toolbox image: apt-get install busybox-static");
        return found;
      };
      const args =
        image.kind === "kubectl"
          ? [
              "build",
              "--name",
              image.name,
              "--out",
              `${out}.tmp`,
              "--toolbox",
              busybox(),
              `${kubectl}:/bin/kubectl:0755`,
              "--entrypoint",
              "kubectl",
            ]
          : [image.kind, "--out", `${out}.tmp`, "--name", image.name];
      if (image.kind === "toolbox") args.push("--busybox", busybox());
      await run(tool, args, { env: plainEnv, timeoutMs: 120_000 });
      fs.renameSync(`${out}.tmp`, out);
    }
    archives.push(out);
  }
  return archives;
}

function ctr(binDir: string, plan: RealNodePlan, args: string[], timeoutMs = 120_000) {
  return run(
    path.join(binDir, "ctr"),
    ["--address", plan.paths.containerdSocket, "--namespace", "k8s.io", ...args],
    {
      env: plainEnv,
      timeoutMs,
    },
  );
}

/** The image names the node's containerd has (k8s.io namespace). */
export async function nodeImages(binDir: string, plan: RealNodePlan): Promise<Set<string>> {
  const { stdout } = await ctr(binDir, plan, ["images", "list", "--quiet"], 30_000);
  return new Set(
    stdout
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean),
  );
}

/** Imports every archive whose image the node lacks. */
export async function importNodeImages(
  binDir: string,
  plan: RealNodePlan,
  archives: string[],
  logger: Logger,
): Promise<void> {
  const present = await nodeImages(binDir, plan);
  for (const [index, image] of NODE_IMAGES.entries()) {
    const archive = archives[index];
    if (!archive || present.has(image.name)) continue;
    await ctr(binDir, plan, ["images", "import", "--all-platforms", archive]);
    logger.debug("imported image", { node: plan.name, image: image.name });
  }
}
