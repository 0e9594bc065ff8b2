#!/usr/bin/env bash
# Builds helm (v3) from source fetched through the Go module proxy only, for the tests that
# render charts and apply them through Ring0's kube gateway. The version is pinned by
# tools/helm/go.mod + go.sum; kept apart from tools/kube so the Kubernetes binaries' cache key
# does not change with it. See tools/helm/README.md.
#
# Usage: scripts/helm-build.sh             build if needed; last line of stdout is the bin dir
#        scripts/helm-build.sh --print-dir print the expected bin dir; exit 0 if built, 3 if not
#
# Env:   RING0_HELM_CACHE      cache root (default ~/.cache/ring0/helm)
#        RING0_HELM_BUILD_JOBS go build -p (default: number of CPUs)
set -euo pipefail

GO_BUILD_NAME=helm-build
GO_BUILD_WHAT="helm"
GO_BUILD_TOOL_DIR=tools/helm
GO_BUILD_HELP_LINES=2,12
# shellcheck source=scripts/lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
helm_dir="$repo_root/tools/helm"


is_complete() { [[ -x "$1/helm" ]]; }

begin_build "${RING0_HELM_CACHE:-$HOME/.cache/ring0/helm}" "${RING0_HELM_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}" "helm"

t=$SECONDS
log "downloading modules (verified against committed go.sum)"
(cd "$helm_dir" && go mod download)
download_secs=$((SECONDS - t))
log "modules ready in ${download_secs}s"

modver() { (cd "$helm_dir" && go list -m -f '{{.Version}}' "$1"); }

helm_version="$(modver helm.sh/helm/v3)"        # v3.22.0
client_go_version="$(modver k8s.io/client-go)" # v0.37.0 -> Kubernetes 1.37
k8s_minor="${client_go_version#v0.}"
k8s_minor="${k8s_minor%%.*}"

# Same stamping as helm's Makefile. No git checkout here, so the commit is unknown;
# "archive" says the build is from a source archive (the module), as tools/kube does.
# The chartutil/lint versions make `.Capabilities.KubeVersion` 1.<minor of client-go>,
# as in helm's release builds (unstamped it would be v1.20.0).
helm_ldflags="-s -w"
helm_ldflags+=" -X helm.sh/helm/v3/internal/version.version=$helm_version"
helm_ldflags+=" -X helm.sh/helm/v3/internal/version.metadata="
helm_ldflags+=" -X helm.sh/helm/v3/internal/version.gitCommit="
helm_ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=archive"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  helm_ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
done

t=$SECONDS
log "building helm (helm.sh/helm/v3/cmd/helm $helm_version) ..."
(cd "$helm_dir" && go build -p "$jobs" -trimpath -ldflags "$helm_ldflags" -o "$tmp_dir/bin/helm" helm.sh/helm/v3/cmd/helm)
build_secs=$((SECONDS - t))
log "built helm in ${build_secs}s"

"$tmp_dir/bin/helm" version --short >/dev/null || {
  log "the built helm does not run"
  exit 1
}

{
  echo "helm $helm_version"
  echo "client-go $client_go_version"
  echo "go $go_version"
  echo "key $key"
  echo "download_seconds $download_secs"
  echo "build_seconds helm $build_secs"
  echo "build_seconds total $((SECONDS - start_all))"
} >"$tmp_dir/versions.txt"

publish_build "helm"
