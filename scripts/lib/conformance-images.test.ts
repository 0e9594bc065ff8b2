import { describe, expect, it } from "vitest";
import {
  AGNHOST_GROUP,
  AGNHOST_PASSWD,
  CONFORMANCE_IMAGES,
  imageBuildArgs,
  missingImages,
  type TestImage,
} from "./conformance-images";

const inputs = {
  agnhost: "/cache/bin/agnhost",
  nnp: "/cache/bin/nnp",
  busybox: "/bin/busybox",
  bash: "/bin/bash-static",
  testImageFiles: "/cache/bin/test-images",
  passwd: "/w/passwd",
  group: "/w/group",
  out: "/w/image.tar",
};

/** The values of a repeatable flag, in order. */
function flag(args: string[], name: string): string[] {
  return args.flatMap((arg, index) => (arg === name ? [args[index + 1] as string] : []));
}

describe("the suite's test images", () => {
  it("are the names and tags of k8s.io/kubernetes v1.36.4's manifest.go", () => {
    expect(CONFORMANCE_IMAGES.map((image) => image.name)).toEqual([
      "registry.k8s.io/e2e-test-images/agnhost:2.63.0",
      "registry.k8s.io/e2e-test-images/agnhost:2.55",
      "registry.k8s.io/e2e-test-images/busybox:1.37.0-1",
      "registry.k8s.io/e2e-test-images/kitten:1.8",
      "registry.k8s.io/e2e-test-images/nautilus:1.8",
      "registry.k8s.io/e2e-test-images/nginx:1.15-4",
      "registry.k8s.io/e2e-test-images/nginx:1.27-0",
      "registry.k8s.io/e2e-test-images/nonewprivs:1.4",
      "registry.k8s.io/pause:3.10.2",
    ]);
  });

  it("are missing unless the registry has that exact name and tag", () => {
    const present = [
      "localhost/ring0/pause:1",
      "registry.k8s.io/e2e-test-images/agnhost:2.63.0",
      "registry.k8s.io/e2e-test-images/nginx:1.15",
      "docker.io/library/busybox:1.37.0-1",
    ];
    expect(missingImages(CONFORMANCE_IMAGES, present).map((image) => image.name)).toEqual([
      "registry.k8s.io/e2e-test-images/agnhost:2.55",
      "registry.k8s.io/e2e-test-images/busybox:1.37.0-1",
      "registry.k8s.io/e2e-test-images/kitten:1.8",
      "registry.k8s.io/e2e-test-images/nautilus:1.8",
      "registry.k8s.io/e2e-test-images/nginx:1.15-4",
      "registry.k8s.io/e2e-test-images/nginx:1.27-0",
      "registry.k8s.io/e2e-test-images/nonewprivs:1.4",
      "registry.k8s.io/pause:3.10.2",
    ]);
    expect(missingImages(CONFORMANCE_IMAGES, new Set(CONFORMANCE_IMAGES.map((image) => image.name)))).toEqual(
      [],
    );
  });

  it("agnhost: /agnhost on the toolbox, upstream's entrypoint, command, agnhost-2, /uploads and users", () => {
    const image = CONFORMANCE_IMAGES[0] as TestImage;
    const args = imageBuildArgs(image, inputs);
    expect(args[0]).toBe("build");
    expect(flag(args, "--name")).toEqual([image.name]);
    expect(flag(args, "--out")).toEqual(["/w/image.tar"]);
    expect(flag(args, "--toolbox")).toEqual(["/bin/busybox"]);
    expect(flag(args, "--entrypoint")).toEqual(["/agnhost"]);
    expect(flag(args, "--cmd")).toEqual(["pause"]);
    expect(flag(args, "--symlink")).toEqual(["/agnhost-2=agnhost", "/bin/bash=sh"]);
    expect(flag(args, "--dir")).toEqual(["/uploads"]);
    expect(flag(args, "--env")).toEqual([
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      `RING0_STAND_IN_FOR=${image.name}`,
    ]);
    expect(args).toContain("/cache/bin/agnhost:/agnhost:0755");
    expect(args).toContain("/bin/bash-static:/bin/sh:0755");
    expect(args).toContain("/w/passwd:/etc/passwd:0644");
    expect(args).toContain("/w/group:/etc/group:0644");
    expect(AGNHOST_PASSWD).toMatch(/^root:x:0:0:/);
    expect(AGNHOST_PASSWD).toContain("user-defined-in-image:x:1000:");
    expect(AGNHOST_GROUP).toContain("group-defined-in-image:x:50000:user-defined-in-image\n");
  });

  it("kitten and nautilus: agnhost with the image's data.json and picture, serving them (test-webserver)", () => {
    for (const name of ["kitten", "nautilus"]) {
      const image = CONFORMANCE_IMAGES.find((candidate) => candidate.name.includes(`/${name}:`)) as TestImage;
      const args = imageBuildArgs(image, inputs);
      expect(flag(args, "--entrypoint")).toEqual(["/agnhost"]);
      expect(flag(args, "--cmd")).toEqual(["test-webserver"]);
      expect(args).toContain(`/cache/bin/test-images/${name}/data.json:/data.json:0644`);
      expect(args).toContain(`/cache/bin/test-images/${name}/${name}.jpg:/${name}.jpg:0644`);
      expect(args).toContain("/cache/bin/agnhost:/agnhost:0755");
    }
  });

  it("nonewprivs: nnp setuid root on the toolbox, CMD nnp", () => {
    const image = CONFORMANCE_IMAGES.find((candidate) =>
      candidate.name.includes("/nonewprivs:"),
    ) as TestImage;
    const args = imageBuildArgs(image, inputs);
    expect(args).toContain("/cache/bin/nnp:/usr/local/bin/nnp:6755");
    expect(flag(args, "--cmd")).toEqual(["nnp"]);
    expect(flag(args, "--entrypoint")).toEqual([]);
    expect(flag(args, "--toolbox")).toEqual(["/bin/busybox"]);
  });

  it("two agnhost tags are two images (their environment differs)", () => {
    const [current, previous] = CONFORMANCE_IMAGES as [TestImage, TestImage];
    const envOf = (image: TestImage) => flag(imageBuildArgs(image, inputs), "--env");
    expect(envOf(current)).not.toEqual(envOf(previous));
  });

  it("nginx stand-ins serve HTTP on port 80 with no arguments; busybox is the toolbox with bash as sh; pause is ring0-image's", () => {
    const byName = (name: string) =>
      CONFORMANCE_IMAGES.find((image) => image.name.endsWith(name)) as TestImage;
    for (const tag of ["nginx:1.15-4", "nginx:1.27-0"]) {
      const args = imageBuildArgs(byName(tag), inputs);
      expect(flag(args, "--entrypoint")).toEqual(["/agnhost"]);
      expect(flag(args, "--cmd")).toEqual(["netexec", "--http-port=80", "--udp-port=-1"]);
      expect(flag(args, "--toolbox")).toEqual(["/bin/busybox"]);
      expect(args).toContain("/bin/bash-static:/bin/sh:0755");
    }
    const busybox = imageBuildArgs(byName("busybox:1.37.0-1"), inputs);
    expect(flag(busybox, "--cmd")).toEqual(["sh"]);
    // bash as sh: busybox 1.35's ash drops env vars like data-1 (envFrom keys).
    expect(busybox).toContain("/bin/bash-static:/bin/sh:0755");
    expect(flag(busybox, "--entrypoint")).toEqual([]);
    expect(busybox.some((arg) => arg.includes("agnhost"))).toBe(false);
    expect(imageBuildArgs(byName("pause:3.10.2"), inputs)).toEqual([
      "pause",
      "--name",
      "registry.k8s.io/pause:3.10.2",
      "--out",
      "/w/image.tar",
    ]);
  });
});
