#!/usr/bin/env bash
# Builds Ring0's local Kubernetes binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, kubelet, kube-proxy, etcd, etcdctl, etcdutl, kwok, kwokctl, Ring0's
# ring0-simkubelet and ring0-image from tools/kube/kwok, and containerd, containerd-shim-runc-v2,
# ctr for real nodes, and ring0-registry, the local OCI registry of real nodes) from source fetched
# through the Go module proxy only. Versions are pinned by tools/kube/go.mod + go.sum (k8s,
# kubectl, etcd), tools/kube/kwok/go.mod + go.sum (kwok), tools/kube/containerd/go.mod + go.sum
# (containerd) and tools/kube/registry/go.mod + go.sum (distribution). See tools/kube/README.md.
#
# Usage: scripts/kube-build.sh             build if needed; last line of stdout is the bin dir
#        scripts/kube-build.sh --print-dir print the expected bin dir; exit 0 if built, 3 if not
#
# Env:   RING0_KUBE_CACHE      cache root (default ~/.cache/ring0/kube)
#        RING0_KUBE_BUILD_JOBS go build -p (default: number of CPUs)
set -euo pipefail

GO_BUILD_NAME=kube-build
GO_BUILD_WHAT="Ring0's Kubernetes binaries"
GO_BUILD_TOOL_DIR=tools/kube
GO_BUILD_HELP_LINES=2,13
# shellcheck source=scripts/lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
kube_dir="$repo_root/tools/kube"
kwok_dir="$kube_dir/kwok"
containerd_dir="$kube_dir/containerd"
registry_dir="$kube_dir/registry"

BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy etcd etcdctl etcdutl
  kwok kwokctl ring0-simkubelet ring0-image containerd containerd-shim-runc-v2 ctr ring0-registry)

is_complete() {
  local d="$1" b
  for b in "${BINARIES[@]}"; do
    [[ -x "$d/$b" ]] || return 1
  done
}

begin_build "${RING0_KUBE_CACHE:-$HOME/.cache/ring0/kube}" "${RING0_KUBE_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}" "kube binaries"

t=$SECONDS
log "downloading modules (verified against committed go.sum)"
(cd "$kube_dir" && go mod download)
(cd "$kwok_dir" && go mod download)
(cd "$containerd_dir" && go mod download)
(cd "$registry_dir" && go mod download)
log "modules ready in $((SECONDS - t))s"

modver() { (cd "$1" && go list -m -f '{{.Version}}' "$2"); }
modtime() { (cd "$1" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' "$2"); }

kube_version="$(modver "$kube_dir" k8s.io/kubernetes)"             # v1.36.4
kube_date="$(modtime "$kube_dir" k8s.io/kubernetes)"               # release time, for reproducibility
etcd_version="$(modver "$kube_dir" go.etcd.io/etcd/server/v3)"     # v3.6.8
kwok_version="$(modver "$kwok_dir" sigs.k8s.io/kwok)"              # v0.8.0
containerd_version="$(modver "$containerd_dir" github.com/containerd/containerd/v2)" # v2.4.2
registry_version="$(modver "$registry_dir" github.com/distribution/distribution/v3)" # v3.1.2
kube_major="${kube_version#v}"
kube_major="${kube_major%%.*}"
kube_minor="${kube_version#v*.}"
kube_minor="${kube_minor%%.*}"

# Same stamping as kubernetes' hack/lib/version.sh. No git checkout here, so the
# commit is unknown; "archive" is what kubernetes itself reports for source-archive builds.
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=$kube_major -X $pkg.gitMinor=$kube_minor"
  kube_ldflags+=" -X $pkg.gitCommit= -X $pkg.gitTreeState=archive -X $pkg.buildDate=$kube_date"
done
# Tags as in kubernetes' hack/lib/golang.sh for non-debug builds.
kube_tags="selinux,notest,grpcnotrace"
etcd_ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$etcd_version" # no git checkout: the tag
kwok_ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$kwok_version -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${kube_version#v}"
# Stamping and tags as in containerd's Makefile (urfave_cli_no_docs everywhere, no_grpc for the
# shim). The proxy serves no commit for a module version, so version.Revision stays empty. The
# no_btrfs/no_devmapper/no_zfs snapshotters would need cgo or host tools Ring0 does not use.
containerd_ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$containerd_version"
containerd_tags="urfave_cli_no_docs,no_btrfs,no_devmapper,no_zfs"

declare -A build_secs=()
build() { # name dir tags ldflags package
  local name="$1" dir="$2" tags="$3" ldflags="$4" pkg="$5" t=$SECONDS
  log "building $name ($pkg) ..."
  (cd "$dir" && go build -p "$jobs" -trimpath -tags "$tags" -ldflags "$ldflags" -o "$tmp_dir/bin/$name" "$pkg")
  build_secs[$name]=$((SECONDS - t))
  log "built $name in ${build_secs[$name]}s (total $((SECONDS - start_all))s)"
}

# kube-apiserver first: the controller-manager, scheduler and kubectl reuse most of its
# compiled packages from the Go build cache. etcd and kwok have their own flags/graphs.
build kube-apiserver "$kube_dir" "$kube_tags" "$kube_ldflags" k8s.io/kubernetes/cmd/kube-apiserver
build kube-controller-manager "$kube_dir" "$kube_tags" "$kube_ldflags" k8s.io/kubernetes/cmd/kube-controller-manager
build kube-scheduler "$kube_dir" "$kube_tags" "$kube_ldflags" k8s.io/kubernetes/cmd/kube-scheduler
build kubectl "$kube_dir" "$kube_tags" "$kube_ldflags" k8s.io/kubernetes/cmd/kubectl
# Real nodes' node agents (same pins and flags as the control plane).
build kubelet "$kube_dir" "$kube_tags" "$kube_ldflags" k8s.io/kubernetes/cmd/kubelet
build kube-proxy "$kube_dir" "$kube_tags" "$kube_ldflags" k8s.io/kubernetes/cmd/kube-proxy
build etcd "$kube_dir" "" "$etcd_ldflags" go.etcd.io/etcd/server/v3
build etcdctl "$kube_dir" "" "$etcd_ldflags" go.etcd.io/etcd/etcdctl/v3
build etcdutl "$kube_dir" "" "$etcd_ldflags" go.etcd.io/etcd/etcdutl/v3
build kwok "$kwok_dir" "" "$kwok_ldflags" sigs.k8s.io/kwok/cmd/kwok
build kwokctl "$kwok_dir" "" "$kwok_ldflags" sigs.k8s.io/kwok/cmd/kwokctl
# Ring0's own kubelet API for kwok's simulated nodes: sandboxed exec, simulated logs (see its doc).
build ring0-simkubelet "$kwok_dir" "" "-s -w" ring0/tools/kube/kwok/simkubelet
# Ring0's OCI image builder (toolbox and pause images for real nodes, imported with ctr: no registry).
build ring0-image "$kwok_dir" "" "-s -w" ring0/tools/kube/kwok/image
# Real nodes' container runtime (runc and the CNI plugins come from Debian: see ./ring0).
build containerd "$containerd_dir" "$containerd_tags" "$containerd_ldflags" github.com/containerd/containerd/v2/cmd/containerd
build containerd-shim-runc-v2 "$containerd_dir" "urfave_cli_no_docs,no_grpc" "$containerd_ldflags" \
  github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
build ctr "$containerd_dir" "urfave_cli_no_docs" "$containerd_ldflags" github.com/containerd/containerd/v2/cmd/ctr
# Real nodes' image registry: distribution's registry with the filesystem driver only (our main).
build ring0-registry "$registry_dir" "" "-s -w -X github.com/distribution/distribution/v3/version.version=$registry_version" \
  ring0/tools/kube/registry/cmd/ring0-registry

{
  echo "kubernetes $kube_version"
  echo "etcd $etcd_version"
  echo "kwok $kwok_version"
  echo "containerd $containerd_version"
  echo "distribution $registry_version"
  echo "go $go_version"
  echo "key $key"
  for b in "${BINARIES[@]}"; do echo "build_seconds $b ${build_secs[$b]}"; done
  echo "build_seconds total $((SECONDS - start_all))"
} >"$tmp_dir/versions.txt"

# Ready-made kwokctl config: binary runtime, loopback only, every binary local (no downloads).
# Use: kwokctl -c <dir>/kwokctl.yaml --name NAME create cluster --kubeconfig ''
{
  echo "kind: KwokctlConfiguration"
  echo "apiVersion: config.kwok.x-k8s.io/v1alpha1"
  echo "options:"
  echo "  runtime: binary"
  echo "  bindAddress: 127.0.0.1"
  echo "  kubeVersion: $kube_version"
  echo "  etcdVersion: ${etcd_version#v}"
  echo "  kubeApiserverBinary: $bin_dir/kube-apiserver"
  echo "  kubeControllerManagerBinary: $bin_dir/kube-controller-manager"
  echo "  kubeSchedulerBinary: $bin_dir/kube-scheduler"
  echo "  kubectlBinary: $bin_dir/kubectl"
  echo "  etcdBinary: $bin_dir/etcd"
  echo "  etcdctlBinary: $bin_dir/etcdctl"
  echo "  etcdutlBinary: $bin_dir/etcdutl"
  echo "  kwokControllerBinary: $bin_dir/kwok"
} >"$tmp_dir/kwokctl.yaml"

publish_build "all kube binaries"
