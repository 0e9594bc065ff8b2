/**
 * The upstream conformance suite's test images, built here and pushed into Ring0's own registry
 * (where real nodes pull every image from: server/cluster/real-node/registry.ts), since no public
 * registry is reachable. Names and tags are the suite's own (k8s.io/kubernetes@v1.36.4
 * test/utils/image/manifest.go); the contents are built by ring0-image (tools/kube/kwok/image) from
 * agnhost (built from the same k8s.io/kubernetes module by scripts/conformance-build.sh), Debian's
 * busybox-static and bash-static and ring0-image's own pause, so no byte comes from the internet.
 * Every image but pause has the toolbox (busybox and its applets) with bash as /bin/sh: Debian's
 * busybox is 1.35, whose ash drops environment variables whose names are no shell names (envFrom
 * keys like "data-1"), which upstream's busybox 1.37 and bash pass on to what they run.
 *   agnhost:2.63.0, agnhost:2.55   /agnhost (2.63.0, for both tags) on the toolbox, as upstream's
 *                                  ENTRYPOINT ["/agnhost"] CMD ["pause"] (2.55: the suite's "previous"
 *                                  agnhost, which it only needs to differ by name)
 *   busybox:1.37.0-1               the toolbox, CMD ["sh"]
 *   kitten:1.8, nautilus:1.8       as upstream: agnhost plus the image's data.json and picture
 *                                  (test/images/<name>/html of the module), CMD ["test-webserver"]
 *   nonewprivs:1.4                 as upstream: the toolbox plus nnp (test/images/nonewprivs, prints its
 *                                  effective uid) setuid root at /usr/local/bin/nnp, CMD ["nnp"]
 *   nginx:1.15-4, nginx:1.27-0     stand-ins, not nginx: HTTP on port 80 with no arguments
 *                                  (agnhost netexec)
 *   registry.k8s.io/pause:3.10.2   ring0-image's pause
 * Every image but pause carries RING0_STAND_IN_FOR=<its name> in its environment (so two tags
 * are two images, and a container says what it runs). Only what the registry lacks is built and
 * pushed; what an operator pushed under these names stays.
 */
import fs from "node:fs";
import path from "node:path";
import { run } from "@/server/cluster/process";
import {
  listRegistryImages,
  pushImageArchive,
  registryAuthorization,
  runningRegistryPort,
} from "@/server/cluster/real-node/registry";
import { BUSYBOX_PATHS } from "@/server/cluster/sim-kubelet";

/** Debian's bash-static: the images' /bin/sh. */
const STATIC_BASH_PATHS = ["/bin/bash-static", "/usr/bin/bash-static"];

export type TestImageKind = "agnhost" | "busybox" | "http" | "update-demo" | "nonewprivs" | "pause";

export interface TestImage {
  /** The full name the suite uses. */
  name: string;
  kind: TestImageKind;
}

const E2E = "registry.k8s.io/e2e-test-images";

/**
 * The suite's images that conformance specs run (manifest.go's Agnhost, AgnhostPrev, BusyBox, Kitten,
 * Nautilus, Nginx, NginxNew, Nonewprivs, Pause).
 */
export const CONFORMANCE_IMAGES: readonly TestImage[] = [
  { name: `${E2E}/agnhost:2.63.0`, kind: "agnhost" },
  { name: `${E2E}/agnhost:2.55`, kind: "agnhost" },
  { name: `${E2E}/busybox:1.37.0-1`, kind: "busybox" },
  { name: `${E2E}/kitten:1.8`, kind: "update-demo" },
  { name: `${E2E}/nautilus:1.8`, kind: "update-demo" },
  { name: `${E2E}/nginx:1.15-4`, kind: "http" },
  { name: `${E2E}/nginx:1.27-0`, kind: "http" },
  { name: `${E2E}/nonewprivs:1.4`, kind: "nonewprivs" },
  { name: "registry.k8s.io/pause:3.10.2", kind: "pause" },
];

/** Alpine's PATH, as upstream's images have it (the toolbox's applets are in /bin). */
const IMAGE_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** agnhost's users and groups: the toolbox's, and the ones upstream's Dockerfile adds (SupplementalGroups specs). */
export const AGNHOST_PASSWD =
  "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n" +
  "user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n";
export const AGNHOST_GROUP =
  "root:x:0:\nnogroup:x:65534:\nuser-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n";

/** The images of `images` that `present` (names as `./ring0 images list` gives them) lacks. */
export function missingImages(images: readonly TestImage[], present: Iterable<string>): TestImage[] {
  const have = new Set(present);
  return images.filter((image) => !have.has(image.name));
}

export interface BuildInputs {
  /** The static agnhost binary. */
  agnhost: string;
  /** The static nnp binary (test/images/nonewprivs). */
  nnp: string;
  /** A static busybox (its --list gives the toolbox's applets). */
  busybox: string;
  /** A static bash, the images' /bin/sh. */
  bash: string;
  /** scripts/conformance-build.sh's test-images/ dir: <image>/data.json and <image>.jpg. */
  testImageFiles: string;
  /** Files holding AGNHOST_PASSWD and AGNHOST_GROUP. */
  passwd: string;
  group: string;
  /** The archive to write. */
  out: string;
}

/** ring0-image's arguments that build `image` into inputs.out. */
export function imageBuildArgs(image: TestImage, inputs: BuildInputs): string[] {
  if (image.kind === "pause") return ["pause", "--name", image.name, "--out", inputs.out];
  const common = [
    "build",
    "--name",
    image.name,
    "--out",
    inputs.out,
    "--toolbox",
    inputs.busybox,
    "--env",
    IMAGE_PATH,
    "--env",
    `RING0_STAND_IN_FOR=${image.name}`,
    `${inputs.bash}:/bin/sh:0755`,
  ];
  if (image.kind === "busybox") return [...common, "--cmd", "sh"];
  // Upstream: COPY nnp /usr/local/bin/nnp, chmod +s (setuid and setgid root), CMD ["nnp"].
  if (image.kind === "nonewprivs")
    return [...common, `${inputs.nnp}:/usr/local/bin/nnp:6755`, "--cmd", "nnp"];
  const agnhost = [`${inputs.agnhost}:/agnhost:0755`, "--entrypoint", "/agnhost"];
  if (image.kind === "http")
    return [...common, ...agnhost, "--cmd", "netexec", "--cmd", "--http-port=80", "--cmd", "--udp-port=-1"];
  if (image.kind === "update-demo") {
    // Upstream: FROM agnhost, COPY html/<name>.jpg and html/data.json to /, CMD ["test-webserver"].
    const base = image.name.slice(image.name.lastIndexOf("/") + 1, image.name.lastIndexOf(":"));
    const files = path.join(inputs.testImageFiles, base);
    return [
      ...common,
      ...agnhost,
      "--cmd",
      "test-webserver",
      `${path.join(files, "data.json")}:/data.json:0644`,
      `${path.join(files, `${base}.jpg`)}:/${base}.jpg:0644`,
    ];
  }
  return [
    ...common,
    ...agnhost,
    "--cmd",
    "pause",
    // Entrypoint specs override the entrypoint with agnhost-2; netexec uploads to /uploads;
    // upstream's agnhost has bash.
    "--symlink",
    "/agnhost-2=agnhost",
    "--symlink",
    "/bin/bash=sh",
    "--dir",
    "/uploads",
    `${inputs.passwd}:/etc/passwd:0644`,
    `${inputs.group}:/etc/group:0644`,
  ];
}

/**
 * Every image of CONFORMANCE_IMAGES in Ring0's running registry: builds and pushes the missing ones
 * (idempotent); resolves with what it pushed.
 */
export async function ensureConformanceImages(options: {
  stateDir: string;
  /** tools/kube's bin dir (ring0-image, ring0-registry). */
  kubeBinDir: string;
  /** scripts/conformance-build.sh's bin dir (agnhost). */
  conformanceBinDir: string;
  images?: readonly TestImage[];
  log?: (line: string) => void;
}): Promise<string[]> {
  const { stateDir, kubeBinDir } = options;
  const port = runningRegistryPort(stateDir, kubeBinDir);
  if (port === undefined) {
    throw new Error(
      "Ring0's image registry is not running, so the suite's test images cannot be put there: it runs with the real nodes (`./ring0 start`)",
    );
  }
  const present = await listRegistryImages(port, registryAuthorization(stateDir));
  const missing = missingImages(options.images ?? CONFORMANCE_IMAGES, present);
  if (missing.length === 0) return [];
  const busybox = BUSYBOX_PATHS.find((candidate) => fs.existsSync(candidate));
  if (!busybox) throw new Error("busybox is missing for the test images: apt-get install busybox-static");
  const bash = STATIC_BASH_PATHS.find((candidate) => fs.existsSync(candidate));
  if (!bash) throw new Error("a static bash is missing for the test images: apt-get install bash-static");
  const agnhost = path.join(options.conformanceBinDir, "agnhost");
  const nnp = path.join(options.conformanceBinDir, "nnp");
  for (const binary of [agnhost, nnp]) {
    if (!fs.existsSync(binary))
      throw new Error(`${binary} is missing: scripts/conformance-build.sh builds it`);
  }
  const parent = path.join(stateDir, "conformance");
  fs.mkdirSync(parent, { recursive: true, mode: 0o700 });
  const work = fs.mkdtempSync(path.join(parent, "images-"));
  try {
    const inputs = {
      agnhost,
      nnp,
      busybox,
      bash,
      testImageFiles: path.join(options.conformanceBinDir, "test-images"),
      passwd: path.join(work, "passwd"),
      group: path.join(work, "group"),
    };
    fs.writeFileSync(inputs.passwd, AGNHOST_PASSWD);
    fs.writeFileSync(inputs.group, AGNHOST_GROUP);
    const pushed: string[] = [];
    for (const image of missing) {
      const out = path.join(work, "image.tar");
      options.log?.(`building ${image.name}`);
      await run(path.join(kubeBinDir, "ring0-image"), imageBuildArgs(image, { ...inputs, out }), {
        env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
        timeoutMs: 5 * 60_000,
      });
      for (const done of await pushImageArchive(stateDir, kubeBinDir, out)) pushed.push(done.name);
      fs.rmSync(out);
      options.log?.(`pushed ${image.name}`);
    }
    return pushed;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
