import { describe, expect, it } from "vitest";
import { controlPlaneImageArgs, controlPlaneImages, NONROOT_USER } from "./control-plane-images";

describe("the control-plane images", () => {
  it("are named as the kubernetes provisioner asks for them, per version", () => {
    expect(controlPlaneImages({ kube: "1.36.4", etcd: "3.6.8" }).map((image) => image.name)).toEqual([
      "registry.k8s.io/etcd:3.6.8-0",
      "registry.k8s.io/kube-apiserver:v1.36.4",
      "registry.k8s.io/kube-controller-manager:v1.36.4",
    ]);
  });

  it("hold only their binaries and the nonroot user, and run as that user", () => {
    const [etcd] = controlPlaneImages({ kube: "1.36.4", etcd: "3.6.8" });
    const args = controlPlaneImageArgs(etcd as never, {
      binDir: "/bin-dir",
      passwd: "/w/passwd",
      group: "/w/group",
      out: "/w/etcd.tar",
    });
    expect(args).toEqual([
      "build",
      "--name",
      "registry.k8s.io/etcd:3.6.8-0",
      "--out",
      "/w/etcd.tar",
      "--user",
      NONROOT_USER,
      "--env",
      "PATH=/usr/local/bin",
      "/bin-dir/etcd:/usr/local/bin/etcd:0755",
      "/bin-dir/etcdctl:/usr/local/bin/etcdctl:0755",
      "/bin-dir/etcdutl:/usr/local/bin/etcdutl:0755",
      "/w/passwd:/etc/passwd:0644",
      "/w/group:/etc/group:0644",
    ]);
    expect(NONROOT_USER).not.toMatch(/^0(:|$)/);
  });
});
