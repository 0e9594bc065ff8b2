package main

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOnToolbox(t *testing.T) {
	toolbox := Spec{
		Name: toolboxName, Env: []string{"PATH=/bin"}, Cmd: []string{"/bin/sh"},
		Entries: []Entry{
			{Path: "/bin/busybox", Type: TypeFile, Mode: 0o755, Data: []byte("bb")},
			{Path: "/bin/sh", Type: TypeSymlink, Target: "busybox"},
			{Path: "/etc/passwd", Type: TypeFile, Mode: 0o644, Data: []byte("root\n")},
			{Path: "/tmp", Type: TypeDir, Mode: 0o1777},
		},
	}
	image := Spec{
		Name: "registry.example/app:1", Entrypoint: []string{"/app"}, Env: []string{"A=b"},
		Entries: []Entry{
			{Path: "/app", Type: TypeFile, Mode: 0o755, Data: []byte("app")},
			{Path: "etc/passwd/", Type: TypeFile, Mode: 0o600, Data: []byte("root\nuser\n")},
		},
	}
	got := OnToolbox(toolbox, image)
	if got.Name != image.Name || strings.Join(got.Entrypoint, " ") != "/app" || len(got.Cmd) != 0 {
		t.Errorf("run config: %+v", got)
	}
	if strings.Join(got.Env, "|") != "PATH=/bin|A=b" {
		t.Errorf("env %v: want the toolbox's PATH, then the image's", got.Env)
	}
	byPath := map[string]Entry{}
	for _, e := range got.Entries {
		p, _ := cleanPath(e.Path)
		if _, dup := byPath[p]; dup {
			t.Errorf("/%s twice", p)
		}
		byPath[p] = e
	}
	if len(byPath) != 5 || string(byPath["etc/passwd"].Data) != "root\nuser\n" || byPath["bin/sh"].Target != "busybox" ||
		string(byPath["app"].Data) != "app" || byPath["tmp"].Mode != 0o1777 {
		t.Errorf("entries %+v: want the toolbox's under the image's own", byPath)
	}
	// The image's PATH wins; the inputs are not changed.
	image.Env = []string{"PATH=/usr/bin:/bin"}
	if got := OnToolbox(toolbox, image); strings.Join(got.Env, "|") != "PATH=/usr/bin:/bin" {
		t.Errorf("env %v: want the image's PATH only", got.Env)
	}
	if len(toolbox.Entries) != 4 || len(image.Entries) != 2 {
		t.Error("OnToolbox changed its inputs")
	}
}

func TestBuildOnToolbox(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "busybox")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nprintf 'busybox\\nsh\\nls\\n'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app")
	passwd := filepath.Join(dir, "passwd")
	if err := os.WriteFile(app, []byte("app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(passwd, []byte("root:x:0:0::/root:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	img := checkArchive(t, buildArchive(t, "build", "--name", "registry.k8s.io/e2e-test-images/app:1.0",
		"--toolbox", fake, "--entrypoint", "/app", "--cmd", "pause", "--symlink", "/app-2=app",
		"--dir", "/uploads", "--dir", "/scratch:1777", app+":/app", passwd+":/etc/passwd"))
	c := img.config.Config
	if strings.Join(c.Entrypoint, " ") != "/app" || strings.Join(c.Cmd, " ") != "pause" || strings.Join(c.Env, " ") != "PATH=/bin" {
		t.Errorf("run config %+v", c)
	}
	want := map[string]struct {
		typ  byte
		mode int64
		link string
		data string
	}{
		"app":         {tar.TypeReg, 0o755, "", "app"},
		"app-2":       {tar.TypeSymlink, 0o777, "app", ""},
		"bin/sh":      {tar.TypeSymlink, 0o777, "busybox", ""},
		"bin/ls":      {tar.TypeSymlink, 0o777, "busybox", ""},
		"etc/passwd":  {tar.TypeReg, 0o644, "", "root:x:0:0::/root:/bin/sh\n"},
		"tmp/":        {tar.TypeDir, 0o1777, "", ""},
		"uploads/":    {tar.TypeDir, 0o755, "", ""},
		"scratch/":    {tar.TypeDir, 0o1777, "", ""},
		"etc/group":   {tar.TypeReg, 0o644, "", "root:x:0:\nnogroup:x:65534:\n"},
		"bin/busybox": {tar.TypeReg, 0o755, "", "#!/bin/sh\nprintf 'busybox\\nsh\\nls\\n'\n"},
	}
	for n, w := range want {
		h, ok := img.layer[n]
		if !ok {
			t.Errorf("layer lacks %s", n)
			continue
		}
		if h.Typeflag != w.typ || h.Mode != w.mode || h.Linkname != w.link || string(img.data[n]) != w.data {
			t.Errorf("%s: type %c mode %o link %q data %q; want %c %o %q %q", n, h.Typeflag, h.Mode, h.Linkname, img.data[n], w.typ, w.mode, w.link, w.data)
		}
	}

	out := filepath.Join(dir, "o.tar")
	for _, args := range [][]string{
		{"--name", "n:1", "--out", out, "--dir", ":0755"},                     // no path
		{"--name", "n:1", "--out", out, "--dir", "/d:99x"},                    // bad mode
		{"--name", "n:1", "--out", out, "--toolbox", filepath.Join(dir, "x")}, // no busybox there
		{"--name", "n:1", "--out", out, "--toolbox", fake, app + ":/bin"},     // a file where the toolbox needs a directory
	} {
		if err := run("build", args); err == nil {
			t.Errorf("build %v: no error", args)
		}
	}
}
