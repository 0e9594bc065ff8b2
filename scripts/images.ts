/**
 * Ring0's local image registry from the command line (the registry real nodes pull every image from;
 * see server/cluster/real-node/registry.ts):
 *   ./ring0 images push <archive> [--name REF] [--replace]
 *                                                push the images of a `docker save` or OCI archive
 *                                                (plain or gzipped) under their own names, or REF;
 *                                                a tag already there as another image is refused
 *                                                unless --replace; localhost/ring0/… is Ring0's own
 *   ./ring0 images list                          every image pods can use
 *   ./ring0 images build [--no-push] [--only control-planes|ring0|postgres]
 *                                                build the images of the `kubernetes` provisioner's
 *                                                control planes (etcd, kube-apiserver,
 *                                                kube-controller-manager; scripts/lib/control-plane-images.ts)
 *                                                and Ring0's own (scripts/lib/ring0-image.ts; the
 *                                                production build is made first when a source is
 *                                                newer than it) and a PostgreSQL for trying the chart
 *                                                here (scripts/lib/postgres-image.ts) into
 *                                                $RING0_STATE_DIR/images and push them
 * The local super cluster must be up with real nodes (`./ring0 start` or `npm run cluster:up`).
 * State lives in $RING0_STATE_DIR (default .ring0); a relative archive path is taken from the
 * directory ./ring0 was called in.
 */

import { spawnSync } from "node:child_process";
import path from "node:path";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import {
  listRegistryImages,
  pushImageArchive,
  registryAuthorization,
  runningRegistryPort,
} from "@/server/cluster/real-node/registry";
import { createLogger } from "@/server/logger";
import { type BuiltImage, buildControlPlaneImages } from "./lib/control-plane-images";
import { buildPostgresImage } from "./lib/postgres-image";
import { buildIsStale, buildRing0Image } from "./lib/ring0-image";

const USAGE =
  "usage: ./ring0 images push <archive> [--name REF] [--replace] | ./ring0 images list | ./ring0 images build [--no-push] [--only control-planes|ring0|postgres]\n";

function fail(message: string, code = 1): never {
  process.stderr.write(message.endsWith("\n") ? message : `${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  const stateDir = path.resolve(process.env.RING0_STATE_DIR ?? ".ring0");
  const callerDir = process.env.RING0_CALLER_DIR ?? process.cwd();
  const logger = createLogger(
    { service: "ring0-images" },
    process.env.LOG_LEVEL === "debug" ? "debug" : "warn",
  );
  const out = (line: string) => process.stdout.write(`${line}\n`);
  if (command !== "push" && command !== "list" && command !== "build") fail(USAGE, 2);
  const binDir = await kubeBinaries(logger, { build: false });

  if (command === "build") {
    let push = true;
    let only: "control-planes" | "ring0" | "postgres" | undefined;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as string;
      const value = arg === "--only" ? args[++i] : arg.startsWith("--only=") ? arg.slice(7) : undefined;
      if (arg === "--no-push") push = false;
      else if (value === "control-planes" || value === "ring0" || value === "postgres") only = value;
      else if (value !== undefined || arg === "--only")
        fail(`--only takes control-planes, ring0 or postgres, not ${value ?? "nothing"}\n${USAGE}`, 2);
      else fail(`unknown argument ${arg}\n${USAGE}`, 2);
    }
    if (push && runningRegistryPort(stateDir, binDir) === undefined)
      fail(
        "Ring0's image registry is not running, so the images cannot be pushed: start the world (`./ring0 start`) or pass --no-push",
      );
    const outDir = path.join(stateDir, "images");
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const built: BuiltImage[] = [];
    const root = process.cwd();
    if (!only || only === "control-planes")
      built.push(...(await buildControlPlaneImages({ binDir, outDir, log })));
    if (!only || only === "postgres") built.push(await buildPostgresImage({ root, binDir, outDir, log }));
    if (!only || only === "ring0") {
      if (buildIsStale(root)) {
        log("the production build is missing or older than its sources: npm run build");
        const result = spawnSync("npm", ["run", "--silent", "build"], { stdio: ["ignore", 2, 2] });
        if (result.status !== 0) fail("npm run build failed (above): Ring0's image needs a production build");
      }
      built.push(await buildRing0Image({ root, binDir, outDir, log }));
    }
    for (const image of built) {
      const size = (image.bytes / 1024 / 1024).toFixed(1);
      out(`built ${image.name} → ${image.archive} (${size} MiB, sha256 ${image.sha256.slice(0, 16)}…)`);
      if (!push) continue;
      const ownImages = image.name.startsWith("localhost/ring0/");
      for (const pushed of await pushImageArchive(stateDir, binDir, image.archive, {
        replace: true,
        ownImages,
        logger,
      }))
        out(`pushed ${pushed.name} (${pushed.uploaded} blobs uploaded; ${pushed.present} already there)`);
    }
    return;
  }

  if (command === "list") {
    if (args.length > 0) fail(USAGE, 2);
    const port = runningRegistryPort(stateDir, binDir);
    if (port === undefined)
      fail("Ring0's image registry is not running: it runs with the real nodes (`./ring0 start`)");
    for (const name of await listRegistryImages(port, registryAuthorization(stateDir))) out(name);
    return;
  }

  let name: string | undefined;
  let replace = false;
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--name") {
      name = args[++i];
      if (!name) fail("--name needs an image name, e.g. --name nginx:1.27", 2);
    } else if (arg === "--replace") {
      replace = true;
    } else if (arg.startsWith("--name=")) {
      name = arg.slice("--name=".length);
    } else if (arg.startsWith("-")) {
      fail(`unknown option ${arg}\n${USAGE}`, 2);
    } else {
      positional.push(arg);
    }
  }
  if (positional.length !== 1) fail(`give exactly one archive\n${USAGE}`, 2);
  const archive = path.resolve(callerDir, positional[0] as string);
  const pushed = await pushImageArchive(stateDir, binDir, archive, { name, replace, logger });
  for (const image of pushed) {
    const size = (image.bytes / 1024 / 1024).toFixed(1);
    out(
      `pushed ${image.name} (${image.uploaded} blobs uploaded, ${size} MiB; ${image.present} already there)`,
    );
  }
  const first = pushed[0];
  if (first) out(`Pods use it by that name, e.g.: kubectl run web --image=${first.name}`);
}

main().catch((error: unknown) => fail(`images: ${error instanceof Error ? error.message : String(error)}`));
