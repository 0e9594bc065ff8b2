package main

import (
	"net/url"
	"testing"
	"time"
)

func TestParseKubeletPath(t *testing.T) {
	cases := map[string]*kubeletRequest{
		"/containerLogs/ns/pod/main":        {verb: "containerLogs", namespace: "ns", pod: "pod", container: "main"},
		"/exec/ns/pod/main":                 {verb: "exec", namespace: "ns", pod: "pod", container: "main"},
		"/exec/ns/pod/uid-1/main":           {verb: "exec", namespace: "ns", pod: "pod", container: "main"},
		"/attach/ns/pod/main":               {verb: "attach", namespace: "ns", pod: "pod", container: "main"},
		"/portForward/ns/pod":               {verb: "portForward", namespace: "ns", pod: "pod"},
		"/containerLogs/../../etc/passwd":   nil,
		"/containerLogs/ns/..%2F..%2Fx/c":   nil,
		"/containerLogs/ns/Pod/main":        nil,
		"/containerLogs/ns/.hidden/main":    nil,
		"/exec/ns/pod":                      nil,
		"/run/ns/pod/main":                  nil,
		"/containerLogs/ns/pod/main/extra/": nil,
	}
	for path, want := range cases {
		got, ok := parseKubeletPath(path)
		if want == nil {
			if ok {
				t.Errorf("%s: accepted as %+v", path, got)
			}
			continue
		}
		if !ok || got != *want {
			t.Errorf("%s: got %+v (ok %v), want %+v", path, got, ok, *want)
		}
	}
}

func TestAuthorizedNeedsANamedGroup(t *testing.T) {
	groups := []string{"system:masters", "ring0:node-proxies"}
	if !authorized([]string{"system:masters"}, groups) || !authorized([]string{"x", "ring0:node-proxies"}, groups) {
		t.Fatal("a named group was refused")
	}
	if authorized(nil, groups) || authorized([]string{"system:nodes"}, groups) || authorized([]string{"ring0:tenant-apiserver"}, groups) {
		t.Fatal("an unnamed group was accepted")
	}
}

func TestLogOptions(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	opts, err := logOptions(url.Values{"follow": {"true"}, "tailLines": {"10"}, "timestamps": {"1"}, "sinceSeconds": {"60"}}, now)
	if err != nil || !opts.Follow || !opts.Timestamp || *opts.TailLines != 10 || !opts.Since.Equal(now.Add(-time.Minute)) {
		t.Fatalf("got %+v, %v", opts, err)
	}
	opts, err = logOptions(url.Values{"tail": {"5"}, "sinceTime": {"2026-11-25T11:30:00Z"}, "sinceSeconds": {"7200"}}, now)
	if err != nil || *opts.TailLines != 5 || !opts.Since.Equal(time.Date(2026, 11, 25, 11, 30, 0, 0, time.UTC)) {
		t.Fatalf("got %+v, %v", opts, err)
	}
	for _, bad := range []url.Values{{"follow": {"maybe"}}, {"tailLines": {"-1"}}, {"limitBytes": {"x"}}, {"sinceTime": {"yesterday"}}} {
		if _, err := logOptions(bad, now); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestHostnameOf(t *testing.T) {
	long := "ns/" + string(make([]byte, 0)) + "a-very-long-pod-name-that-goes-on-and-on-and-on-well-past-sixty-three-characters"
	if got := hostnameOf(long); len(got) > 63 {
		t.Fatalf("%q is longer than 63", got)
	}
	if got := hostnameOf("ns/web-0"); got != "web-0" {
		t.Fatalf("got %q", got)
	}
}
