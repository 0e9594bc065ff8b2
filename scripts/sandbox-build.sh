#!/usr/bin/env bash
# Builds gVisor's runsc and its containerd shim (containerd-shim-runsc-v1) from source fetched
# through the Go module proxy only: the sandboxed runtime of real nodes (RuntimeClass
# ring0-gvisor). The version is pinned by tools/sandbox/go.mod + go.sum (gVisor's Go branch);
# kept apart from tools/kube so the Kubernetes binaries' cache key does not change with it.
#
# Usage: scripts/sandbox-build.sh             build if needed; last line of stdout is the bin dir
#        scripts/sandbox-build.sh --print-dir print the expected bin dir; exit 0 if built, 3 if not
#
# Env:   RING0_SANDBOX_CACHE      cache root (default ~/.cache/ring0/sandbox)
#        RING0_SANDBOX_BUILD_JOBS go build -p (default: number of CPUs)
set -euo pipefail

GO_BUILD_NAME=sandbox-build
GO_BUILD_WHAT="gVisor (runsc)"
GO_BUILD_TOOL_DIR=tools/sandbox
GO_BUILD_HELP_LINES=2,12
# shellcheck source=scripts/lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
sandbox_dir="$repo_root/tools/sandbox"

is_complete() { [[ -x "$1/runsc" && -x "$1/containerd-shim-runsc-v1" ]]; }

begin_build "${RING0_SANDBOX_CACHE:-$HOME/.cache/ring0/sandbox}" "${RING0_SANDBOX_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}" "gVisor"

t=$SECONDS
log "downloading modules (verified against committed go.sum)"
(cd "$sandbox_dir" && go mod download)
download_secs=$((SECONDS - t))
log "modules ready in ${download_secs}s"

gvisor_version="$(cd "$sandbox_dir" && go list -m -f '{{.Version}}' gvisor.dev/gvisor)"

# One change to gVisor's shim, in a copy of the module (hard links but for the one file) that a
# temporary go.mod replaces it with: the shim sets its own oom_score_adj to -999, which needs
# CAP_SYS_RESOURCE, and this machine kind has none (../shared/notes/real-node.md; containerd's CRI
# runs with restrict_oom_score_adj for the same reason). It keeps containerd's score instead (0).
gvisor_dir="$(cd "$sandbox_dir" && go list -m -f '{{.Dir}}' gvisor.dev/gvisor)"
patched_dir="$tmp_dir/gvisor-shim"
cp -rl "$gvisor_dir" "$patched_dir" 2>/dev/null || cp -r "$gvisor_dir" "$patched_dir"
chmod -R u+w "$patched_dir"
manager="$patched_dir/pkg/shim/v1/manager.go"
sed -E 's/^(\s*oomScoreMax\s*=\s*)-999$/\10/' "$gvisor_dir/pkg/shim/v1/manager.go" >"$manager.new"
if ! grep -qE '^\s*oomScoreMax\s*=\s*0$' "$manager.new"; then
  log "gVisor's shim no longer reads 'oomScoreMax = -999' in pkg/shim/v1/manager.go: update this script"
  exit 1
fi
rm -f "$manager" && mv "$manager.new" "$manager"
cp "$sandbox_dir/go.sum" "$tmp_dir/shim.sum"
{ cat "$sandbox_dir/go.mod"; echo "replace gvisor.dev/gvisor => $patched_dir"; } >"$tmp_dir/shim.mod"

# runsc reports its version from this variable, as gVisor's own builds stamp it.
ldflags="-s -w -X gvisor.dev/gvisor/runsc/version.version=$gvisor_version"
t=$SECONDS
log "building runsc and containerd-shim-runsc-v1 (gvisor.dev/gvisor $gvisor_version) ..."
(cd "$sandbox_dir" && go build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$tmp_dir/bin/runsc" gvisor.dev/gvisor/runsc)
(cd "$sandbox_dir" && go build -p "$jobs" -trimpath -modfile "$tmp_dir/shim.mod" -ldflags "-s -w" -o "$tmp_dir/bin/containerd-shim-runsc-v1" gvisor.dev/gvisor/shim)
build_secs=$((SECONDS - t))
log "built gVisor in ${build_secs}s"
rm -rf "$patched_dir" "$tmp_dir/shim.mod" "$tmp_dir/shim.sum"

"$tmp_dir/bin/runsc" --version >/dev/null || {
  log "the built runsc does not run"
  exit 1
}

{
  echo "gvisor $gvisor_version"
  echo "go $go_version"
  echo "key $key"
  echo "download_seconds $download_secs"
  echo "build_seconds gvisor $build_secs"
  echo "build_seconds total $((SECONDS - start_all))"
} >"$tmp_dir/versions.txt"

publish_build "gVisor"
