package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

const (
	toolboxName = "localhost/ring0/toolbox:1"
	pauseName   = "localhost/ring0/pause:1"
	httpdName   = "localhost/ring0/httpd:1"
)

// busyboxApplets asks the (host) busybox binary for its applet list.
func busyboxApplets(busybox string) ([]string, error) {
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", busybox, err)
	}
	var applets []string
	for _, a := range strings.Fields(string(out)) {
		if a != "busybox" && !strings.Contains(a, "/") {
			applets = append(applets, a)
		}
	}
	if len(applets) == 0 {
		return nil, fmt.Errorf("%s --list printed no applets", busybox)
	}
	return applets, nil
}

// ToolboxSpec is a busybox image: /bin/busybox, one symlink per applet in /bin, root and nobody
// in /etc/passwd and /etc/group, a sticky /tmp; PATH=/bin, CMD /bin/sh.
func ToolboxSpec(busybox string) (Spec, error) {
	data, err := os.ReadFile(busybox)
	if err != nil {
		return Spec{}, err
	}
	applets, err := busyboxApplets(busybox)
	if err != nil {
		return Spec{}, err
	}
	entries := []Entry{
		{Path: "/bin/busybox", Type: TypeFile, Mode: 0o755, Data: data},
		{Path: "/etc/passwd", Type: TypeFile, Mode: 0o644,
			Data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")},
		{Path: "/etc/group", Type: TypeFile, Mode: 0o644, Data: []byte("root:x:0:\nnogroup:x:65534:\n")},
		{Path: "/tmp", Type: TypeDir, Mode: 0o1777},
		{Path: "/root", Type: TypeDir, Mode: 0o700},
	}
	for _, a := range applets {
		entries = append(entries, Entry{Path: "/bin/" + a, Type: TypeSymlink, Target: "busybox"})
	}
	return Spec{Name: toolboxName, Env: []string{"PATH=/bin"}, Cmd: []string{"/bin/sh"}, Entries: entries}, nil
}

// OnToolbox is image on top of the toolbox: the toolbox's entries, except at paths the image gives
// itself, then the image's; the image's run config, with the toolbox's PATH when it sets none.
func OnToolbox(toolbox, image Spec) Spec {
	own := map[string]bool{}
	for _, e := range image.Entries {
		if p, err := cleanPath(e.Path); err == nil {
			own[p] = true
		}
	}
	out := image
	out.Entries = nil
	for _, e := range toolbox.Entries {
		if p, err := cleanPath(e.Path); err == nil && !own[p] {
			out.Entries = append(out.Entries, e)
		}
	}
	out.Entries = append(out.Entries, image.Entries...)
	hasPath := false
	for _, kv := range image.Env {
		hasPath = hasPath || strings.HasPrefix(kv, "PATH=")
	}
	if !hasPath {
		var path []string
		for _, kv := range toolbox.Env {
			if strings.HasPrefix(kv, "PATH=") {
				path = append(path, kv)
			}
		}
		out.Env = append(path, image.Env...)
	}
	return out
}

// PauseSpec is a pause image: a copy of this program (static) at /pause, entrypoint
// ["/pause", "pause-run"].
func PauseSpec(self string) (Spec, error) {
	data, err := os.ReadFile(self)
	if err != nil {
		return Spec{}, err
	}
	return Spec{
		Name:       pauseName,
		Entrypoint: []string{"/pause", "pause-run"},
		Entries:    []Entry{{Path: "/pause", Type: TypeFile, Mode: 0o755, Data: data}},
	}, nil
}

// HTTPDSpec is a small HTTP server image: a copy of this program at /httpd, entrypoint
// ["/httpd", "httpd-run"] (port 8080, or $PORT).
func HTTPDSpec(self string) (Spec, error) {
	data, err := os.ReadFile(self)
	if err != nil {
		return Spec{}, err
	}
	return Spec{
		Name:       httpdName,
		Entrypoint: []string{"/httpd", "httpd-run"},
		Entries:    []Entry{{Path: "/httpd", Type: TypeFile, Mode: 0o755, Data: data}},
	}, nil
}
