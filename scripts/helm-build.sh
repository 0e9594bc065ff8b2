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

log() { printf '[helm-build] %s\n' "$*" >&2; }

mode=build
case "${1:-}" in
  "") ;;
  --print-dir) mode=print ;;
  -h | --help)
    sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "unknown argument: $1 (use --print-dir or --help)" >&2
    exit 2
    ;;
esac

# The installed Go may live in /usr/local/go/bin without being on PATH.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "go is not installed: install Go ≥ 1.26 (Debian: golang, or go.dev) to build helm" >&2
  exit 1
fi

# Never let go switch toolchains (that would download one), never fall back to VCS.
export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"

go_version="$(go version)"
if ! [[ "$go_version" =~ go1\.([0-9]+) ]] || ((BASH_REMATCH[1] < 26)); then
  echo "go is too old ($go_version): install Go ≥ 1.26 (Debian: golang, or go.dev) to build helm" >&2
  exit 1
fi

script_path="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
repo_root="$(cd "$(dirname "$script_path")/.." && pwd)"
helm_dir="$repo_root/tools/helm"

# Cache key: every go.mod/go.sum/*.go under tools/helm, this script, and `go version`.
cache_key() {
  (
    cd "$repo_root"
    find tools/helm -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) -print | LC_ALL=C sort |
      while IFS= read -r f; do
        printf '== %s\n' "$f"
        cat "$f"
      done
    printf '== scripts/helm-build.sh\n'
    cat "$script_path"
    printf '== go version\n%s\n' "$go_version"
  ) | sha256sum | cut -c1-16
}

cache_root="${RING0_HELM_CACHE:-$HOME/.cache/ring0/helm}"
key="$(cache_key)"
final_dir="$cache_root/$key"
bin_dir="$final_dir/bin"

is_complete() { [[ -x "$1/helm" ]]; }

if [[ "$mode" == print ]]; then
  echo "$bin_dir"
  is_complete "$bin_dir" && exit 0
  exit 3
fi

if is_complete "$bin_dir"; then
  echo "helm up to date: $bin_dir" >&2
  echo "$bin_dir"
  exit 0
fi

# Module proxy only: drop "direct" (VCS fetches) from GOPROXY; honour GOPROXY=off.
goproxy="$(go env GOPROXY)"
if [[ "$goproxy" != off ]]; then
  goproxy="$(printf '%s\n' "$goproxy" | tr ',|' '\n\n' | grep -vx -e direct -e off -e '' | paste -sd, - || true)"
  if [[ -z "$goproxy" ]]; then
    echo "GOPROXY names no module proxy (only direct): set GOPROXY to a Go module proxy" >&2
    exit 1
  fi
  export GOPROXY="$goproxy"
fi

jobs="${RING0_HELM_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"

mkdir -p "$cache_root"
tmp_dir="$(mktemp -d "$cache_root/.tmp-$key-XXXXXX")"
cleanup() { rm -rf "$tmp_dir"; }
trap cleanup EXIT
mkdir -p "$tmp_dir/bin"

start_all=$SECONDS
log "cache key $key (go: $go_version, -p $jobs, GOPROXY=${GOPROXY})"
log "building into $tmp_dir (renamed to $final_dir when complete)"

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

is_complete "$tmp_dir/bin" || {
  log "build finished but helm is missing in $tmp_dir/bin"
  exit 1
}

# Atomic publish: the key dir only ever appears complete.
if ! mv -T "$tmp_dir" "$final_dir" 2>/dev/null; then
  if is_complete "$bin_dir"; then
    log "another build published $final_dir first; keeping it"
  else
    log "could not move $tmp_dir to $final_dir"
    exit 1
  fi
fi

log "helm built in $((SECONDS - start_all))s"
echo "$bin_dir"
