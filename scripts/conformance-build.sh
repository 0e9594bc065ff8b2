#!/usr/bin/env bash
# Builds the upstream Kubernetes conformance suite — the e2e test binary (`k8s.io/kubernetes/test/e2e`,
# `go test -c`), the ginkgo CLI that runs it in parallel, and agnhost and nnp (`test/images/agnhost`,
# `test/images/nonewprivs`, static), which the suite's test images are made of
# (scripts/lib/conformance-images.ts) — from source fetched through the Go module proxy only, with
# exactly the pins of tools/kube (tools/conformance/go.mod is tools/kube's module graph plus the
# suite's test-only modules). Only `npm run conformance` needs it, so `./ring0 start` never waits
# for it. See tools/conformance/README.md.
#
# Usage: scripts/conformance-build.sh             build if needed; last line of stdout is the bin dir
#        scripts/conformance-build.sh --print-dir print the expected bin dir; exit 0 if built, 3 if not
#
# Env:   RING0_KUBE_CACHE      cache root (default ~/.cache/ring0/kube; this build lives in conformance/)
#        RING0_KUBE_BUILD_JOBS go build -p (default: number of CPUs)
set -euo pipefail

GO_BUILD_NAME=conformance-build
GO_BUILD_WHAT="the Kubernetes conformance suite"
GO_BUILD_TOOL_DIR=tools/conformance
GO_BUILD_HELP_LINES=2,14
# shellcheck source=scripts/lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
dir="$repo_root/tools/conformance"

is_complete() {
  [[ -x "$1/e2e.test" && -x "$1/ginkgo" && -x "$1/agnhost" && -x "$1/nnp" &&
    -f "$1/test-images/kitten/data.json" && -f "$1/test-images/nautilus/data.json" ]]
}

begin_build "${RING0_KUBE_CACHE:-$HOME/.cache/ring0/kube}/conformance" "${RING0_KUBE_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}" "conformance suite"

t=$SECONDS
log "downloading modules (verified against committed go.sum)"
(cd "$dir" && go mod download)
log "modules ready in $((SECONDS - t))s"

t=$SECONDS
log "building e2e.test (k8s.io/kubernetes/test/e2e) ... (about 10 minutes on 2 cores, once)"
(cd "$dir" && go test -c -p "$jobs" -trimpath -ldflags "-s -w" -o "$tmp_dir/bin/e2e.test" k8s.io/kubernetes/test/e2e)
log "built e2e.test in $((SECONDS - t))s"
t=$SECONDS
(cd "$dir" && go build -p "$jobs" -trimpath -ldflags "-s -w" -o "$tmp_dir/bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo)
log "built ginkgo in $((SECONDS - t))s"
t=$SECONDS
(cd "$dir" && go build -p "$jobs" -trimpath -ldflags "-s -w" -o "$tmp_dir/bin/agnhost" k8s.io/kubernetes/test/images/agnhost)
log "built agnhost in $((SECONDS - t))s"
(cd "$dir" && go build -p "$jobs" -trimpath -ldflags "-s -w" -o "$tmp_dir/bin/nnp" k8s.io/kubernetes/test/images/nonewprivs)
# The files the kitten and nautilus test images add to agnhost (test/images/*/html), from the module.
k8s_dir="$(cd "$dir" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)"
for image in kitten nautilus; do
  mkdir -p "$tmp_dir/bin/test-images/$image"
  install -m 0644 "$k8s_dir/test/images/$image/html/"* "$tmp_dir/bin/test-images/$image/"
done

publish_build "e2e.test, ginkgo, agnhost, nnp and the test images' files"
