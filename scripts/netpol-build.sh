#!/usr/bin/env bash
# Builds kube-router from source fetched through the Go module proxy only: the NetworkPolicy
# enforcer of real nodes (its firewall alone; no routing, no service proxy). The version is pinned
# by tools/netpol/go.mod + go.sum; kept apart from tools/kube so the Kubernetes binaries' cache key
# does not change with it.
#
# Usage: scripts/netpol-build.sh             build if needed; last line of stdout is the bin dir
#        scripts/netpol-build.sh --print-dir print the expected bin dir; exit 0 if built, 3 if not
#
# Env:   RING0_NETPOL_CACHE      cache root (default ~/.cache/ring0/netpol)
#        RING0_NETPOL_BUILD_JOBS go build -p (default: number of CPUs)
set -euo pipefail

GO_BUILD_NAME=netpol-build
GO_BUILD_WHAT="kube-router"
GO_BUILD_TOOL_DIR=tools/netpol
GO_BUILD_HELP_LINES=2,12
# shellcheck source=scripts/lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
netpol_dir="$repo_root/tools/netpol"

is_complete() { [[ -x "$1/kube-router" ]]; }

begin_build "${RING0_NETPOL_CACHE:-$HOME/.cache/ring0/netpol}" "${RING0_NETPOL_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}" "kube-router"

t=$SECONDS
log "downloading modules (verified against committed go.sum)"
(cd "$netpol_dir" && go mod download)
download_secs=$((SECONDS - t))
log "modules ready in ${download_secs}s"

version="$(cd "$netpol_dir" && go list -m -f '{{.Version}}' github.com/cloudnativelabs/kube-router/v2)"
ldflags="-s -w -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=$version"
t=$SECONDS
log "building kube-router $version ..."
(cd "$netpol_dir" && go build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$tmp_dir/bin/kube-router" github.com/cloudnativelabs/kube-router/v2/cmd/kube-router)
build_secs=$((SECONDS - t))
log "built kube-router in ${build_secs}s"

"$tmp_dir/bin/kube-router" --version >/dev/null || {
  log "the built kube-router does not run"
  exit 1
}

{
  echo "kube-router $version"
  echo "go $go_version"
  echo "key $key"
  echo "download_seconds $download_secs"
  echo "build_seconds kube-router $build_secs"
  echo "build_seconds total $((SECONDS - start_all))"
} >"$tmp_dir/versions.txt"

publish_build "kube-router"
