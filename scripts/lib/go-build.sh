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

# begin_build <cache root> <jobs> <what is up to date>: the cache lookup and the build's workspace.
# The caller defines is_complete <dir> first. Sets key, final_dir, bin_dir; answers --print-dir and
# a cache hit (and exits); otherwise sets jobs, tmp_dir (removed on exit, with a bin/ inside) and
# start_all, with the module proxy as the only source.
begin_build() {
  cache_root="$1"
  key="$(cache_key)"
  final_dir="$cache_root/$key"
  bin_dir="$final_dir/bin"
  if [[ "$mode" == print ]]; then
    echo "$bin_dir"
    is_complete "$bin_dir" && exit 0
    exit 3
  fi
  if is_complete "$bin_dir"; then
    echo "$3 up to date: $bin_dir" >&2
    echo "$bin_dir"
    exit 0
  fi
  use_module_proxy_only
  jobs="$2"
  mkdir -p "$cache_root"
  tmp_dir="$(mktemp -d "$cache_root/.tmp-$key-XXXXXX")"
  trap 'rm -rf "$tmp_dir"' EXIT
  mkdir -p "$tmp_dir/bin"
  start_all=$SECONDS
  log "cache key $key (go: $go_version, -p $jobs, GOPROXY=${GOPROXY})"
  log "building into $tmp_dir (renamed to $final_dir when complete)"
}

# publish_build <what>: checks the build is complete, moves it into place atomically (the key dir
# only ever appears complete) and prints the bin dir as the last line of stdout.
publish_build() {
  is_complete "$tmp_dir/bin" || {
    log "build finished but $1 missing in $tmp_dir/bin"
    exit 1
  }
  if ! mv -T "$tmp_dir" "$final_dir" 2>/dev/null; then
    if is_complete "$bin_dir"; then
      log "another build published $final_dir first; keeping it"
    else
      log "could not move $tmp_dir to $final_dir"
      exit 1
    fi
  fi
  log "$1 built in $((SECONDS - start_all))s"
  echo "$bin_dir"
}
