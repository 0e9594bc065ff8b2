# Shared by scripts/kube-build.sh and scripts/helm-build.sh (sourced, not run): the argument
# parsing, the Go checks and environment, the cache key and the module-proxy-only GOPROXY of a
# build of Ring0's Go tools from the Go module proxy.
#
# The caller sets, before sourcing: GO_BUILD_NAME (log prefix, e.g. kube-build), GO_BUILD_WHAT
# (what Go is needed for, for messages), GO_BUILD_TOOL_DIR (the tools/ dir whose Go files key the
# cache, relative to the repo), GO_BUILD_HELP_LINES (the header lines --help prints, e.g. 2,11).
# It then has: log, mode (build | print), go_version, script_path, repo_root, cache_key,
# use_module_proxy_only.

log() { printf '[%s] %s\n' "$GO_BUILD_NAME" "$*" >&2; }

script_path="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
repo_root="$(cd "$(dirname "$script_path")/.." && pwd)"

mode=build
case "${1:-}" in
  "") ;;
  --print-dir) mode=print ;;
  -h | --help)
    sed -n "${GO_BUILD_HELP_LINES}p" "$script_path" | sed 's/^# \{0,1\}//'
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
  echo "go is not installed: install Go ≥ 1.26 (Debian: golang, or go.dev) to build $GO_BUILD_WHAT" >&2
  exit 1
fi

# Never let go switch toolchains (that would download one), never fall back to VCS.
export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"

go_version="$(go version)"
if ! [[ "$go_version" =~ go1\.([0-9]+) ]] || ((BASH_REMATCH[1] < 26)); then
  echo "go is too old ($go_version): install Go ≥ 1.26 (Debian: golang, or go.dev) to build $GO_BUILD_WHAT" >&2
  exit 1
fi

# Cache key: every go.mod/go.sum/*.go under the tool dir, the calling script, this file, and
# `go version`.
cache_key() {
  (
    cd "$repo_root"
    find "$GO_BUILD_TOOL_DIR" -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) -print | LC_ALL=C sort |
      while IFS= read -r f; do
        printf '== %s\n' "$f"
        cat "$f"
      done
    printf '== %s\n' "scripts/$(basename "$script_path")"
    cat "$script_path"
    printf '== scripts/lib/go-build.sh\n'
    cat "$repo_root/scripts/lib/go-build.sh"
    printf '== go version\n%s\n' "$go_version"
  ) | sha256sum | cut -c1-16
}

# Module proxy only: drop "direct" (VCS fetches) from GOPROXY; honour GOPROXY=off.
use_module_proxy_only() {
  local goproxy
  goproxy="$(go env GOPROXY)"
  if [[ "$goproxy" != off ]]; then
    goproxy="$(printf '%s\n' "$goproxy" | tr ',|' '\n\n' | grep -vx -e direct -e off -e '' | paste -sd, - || true)"
    if [[ -z "$goproxy" ]]; then
      echo "GOPROXY names no module proxy (only direct): set GOPROXY to a Go module proxy" >&2
      exit 1
    fi
    export GOPROXY="$goproxy"
  fi
}
