/**
 * The control-plane images built for real from tools/kube's binaries: each holds exactly its
 * binaries and the nonroot user, runs as that user, and building again gives the same bytes.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { createLogger } from "@/server/logger";
import { type BuiltImage, buildControlPlaneImages, NONROOT_USER } from "./control-plane-images";

let work: string;
let binDir: string;
let built: BuiltImage[];

/** A file of an OCI layout archive (plain tar), by its path in the archive. */
function member(archive: string, name: string): Buffer {
  const result = spawnSync("tar", ["-xOf", archive, name], { maxBuffer: 512 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`tar -xOf ${archive} ${name}: ${result.stderr.toString()}`);
  return result.stdout;
}

const blob = (archive: string, digest: string) =>
  member(archive, `blobs/sha256/${digest.replace("sha256:", "")}`);

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-cp-images-"));
  binDir = await kubeBinaries(createLogger({}, "warn"), { build: false });
  built = await buildControlPlaneImages({ binDir, outDir: path.join(work, "first") });
}, 300_000);

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

describe("the control-plane images", () => {
  it("each hold exactly their static binaries and the nonroot user, and run as that user", () => {
    expect(built.map((image) => image.name)).toEqual([
      expect.stringMatching(/^registry\.k8s\.io\/etcd:\d+\.\d+\.\d+-0$/),
      expect.stringMatching(/^registry\.k8s\.io\/kube-apiserver:v1\.\d+\.\d+$/),
      expect.stringMatching(/^registry\.k8s\.io\/kube-controller-manager:v1\.\d+\.\d+$/),
    ]);
    for (const image of built) {
      const index = JSON.parse(member(image.archive, "index.json").toString()) as {
        manifests: { digest: string; annotations: Record<string, string> }[];
      };
      expect(index.manifests[0]?.annotations["io.containerd.image.name"]).toBe(image.name);
      const manifest = JSON.parse(blob(image.archive, index.manifests[0]?.digest as string).toString()) as {
        config: { digest: string };
        layers: { digest: string }[];
      };
      const config = JSON.parse(blob(image.archive, manifest.config.digest).toString()) as {
        config: { User?: string; Env?: string[] };
      };
      expect(config.config.User).toBe(NONROOT_USER);
      const layerFile = path.join(work, "layer.tgz");
      fs.writeFileSync(layerFile, blob(image.archive, manifest.layers[0]?.digest as string));
      const listing = spawnSync("tar", ["-tzvf", layerFile]).stdout.toString().trim().split("\n");
      const names = listing.map((line) => line.split(/\s+/).at(-1)).sort();
      const binaries = image.name.includes("/etcd:")
        ? ["etcd", "etcdctl", "etcdutl"]
        : [image.name.slice(image.name.lastIndexOf("/") + 1, image.name.indexOf(":", 10))];
      expect(names).toEqual(
        ["etc/", "etc/group", "etc/passwd", "usr/", "usr/local/", "usr/local/bin/"]
          .concat(binaries.map((binary) => `usr/local/bin/${binary}`))
          .sort(),
      );
      expect(member(image.archive, "oci-layout").toString()).toContain("1.0.0");
      // The user exists in the image, and no file in it is owned by anyone but root.
      for (const line of listing) expect(line).toMatch(/^\S+ 0\/0 /);
    }
  });

  it("are reproducible: the same binaries give byte-identical archives", async () => {
    const again = await buildControlPlaneImages({ binDir, outDir: path.join(work, "again") });
    expect(again.map((image) => image.sha256)).toEqual(built.map((image) => image.sha256));
  }, 300_000);
});
