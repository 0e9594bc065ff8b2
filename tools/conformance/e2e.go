// Package conformance pins the upstream Kubernetes conformance suite (k8s.io/kubernetes/test/e2e)
// and the ginkgo CLI in this module's graph, at tools/kube's versions (scripts/conformance-build.sh).
package conformance

import _ "k8s.io/kubernetes/test/e2e"
