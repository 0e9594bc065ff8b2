package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// The pause test re-runs this test binary as the pause process.
	if os.Getenv("RING0_IMAGE_TEST_PAUSE_RUN") == "1" {
		os.Exit(pauseRun())
	}
	// The httpd test re-runs it as the HTTP server, listening where the variable says.
	if addr := os.Getenv("RING0_IMAGE_TEST_HTTPD_RUN"); addr != "" {
		os.Exit(httpdRun([]string{"--listen", addr}))
	}
	os.Exit(m.Run())
}

// readTar returns the regular files and all headers of a tar, by name.
func readTar(t *testing.T, r io.Reader) (map[string][]byte, map[string]*tar.Header, []string) {
	t.Helper()
	files, headers := map[string][]byte{}, map[string]*tar.Header{}
	var order []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		if _, dup := headers[h.Name]; dup {
			t.Errorf("tar member %s twice", h.Name)
		}
		headers[h.Name] = h
		order = append(order, h.Name)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b
		}
	}
	return files, headers, order
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func unmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("json %s: %v", b, err)
	}
}

type checkedImage struct {
	index    index
	manifest manifest
	config   imageConfig
	layer    map[string]*tar.Header
	data     map[string][]byte
}

// checkArchive verifies an OCI layout archive end to end and returns what it holds.
func checkArchive(t *testing.T, archive []byte) checkedImage {
	t.Helper()
	files, headers, _ := readTar(t, bytes.NewReader(archive))
	for _, n := range []string{"oci-layout", "index.json"} {
		if _, ok := files[n]; !ok {
			t.Fatalf("%s missing from the archive", n)
		}
	}
	var layout ociLayout
	unmarshal(t, files["oci-layout"], &layout)
	if layout.ImageLayoutVersion != "1.0.0" {
		t.Errorf("imageLayoutVersion %q", layout.ImageLayoutVersion)
	}
	for n, h := range headers {
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: mtime %v uid %d gid %d", n, h.ModTime, h.Uid, h.Gid)
		}
	}
	for n, b := range files {
		if hexDigest, ok := strings.CutPrefix(n, "blobs/sha256/"); ok {
			if got := sha(b); got != "sha256:"+hexDigest {
				t.Errorf("blob %s has sha256 %s", n, got)
			}
		}
	}
	blob := func(d descriptor) []byte {
		t.Helper()
		b, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok {
			t.Fatalf("blob %s missing", d.Digest)
		}
		if int64(len(b)) != d.Size {
			t.Fatalf("blob %s: size %d, descriptor says %d", d.Digest, len(b), d.Size)
		}
		return b
	}
	var img checkedImage
	unmarshal(t, files["index.json"], &img.index)
	if img.index.SchemaVersion != 2 || len(img.index.Manifests) != 1 {
		t.Fatalf("index.json: %s", files["index.json"])
	}
	md := img.index.Manifests[0]
	if md.MediaType != mediaTypeManifest || md.Platform == nil || md.Platform.Architecture != "amd64" || md.Platform.OS != "linux" {
		t.Errorf("manifest descriptor: %+v", md)
	}
	unmarshal(t, blob(md), &img.manifest)
	if img.manifest.Config.MediaType != mediaTypeConfig || len(img.manifest.Layers) != 1 || img.manifest.Layers[0].MediaType != mediaTypeLayer {
		t.Fatalf("manifest: %+v", img.manifest)
	}
	unmarshal(t, blob(img.manifest.Config), &img.config)
	if img.config.Architecture != "amd64" || img.config.OS != "linux" {
		t.Errorf("config platform %s/%s", img.config.OS, img.config.Architecture)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(img.manifest.Layers[0])))
	if err != nil {
		t.Fatal(err)
	}
	layer, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if img.config.RootFS.Type != "layers" || len(img.config.RootFS.DiffIDs) != 1 || img.config.RootFS.DiffIDs[0] != sha(layer) {
		t.Errorf("rootfs %+v, uncompressed layer is %s", img.config.RootFS, sha(layer))
	}
	var order []string
	img.data, img.layer, order = readTar(t, bytes.NewReader(layer))
	for i := 1; i < len(order); i++ {
		if order[i-1] >= order[i] {
			t.Errorf("layer not sorted: %s before %s", order[i-1], order[i])
		}
	}
	for n, h := range img.layer {
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("layer %s: mtime %v owner %d:%d %q:%q", n, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname)
		}
	}
	return img
}

func buildArchive(t *testing.T, args ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "img.tar")
	if err := run(args[0], append(args[1:], "--out", out)); err != nil {
		t.Fatalf("ring0-image %v: %v", args, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuild(t *testing.T) {
	dir := t.TempDir()
	hello := filepath.Join(dir, "hello")
	conf := filepath.Join(dir, "conf")
	if err := os.WriteFile(hello, []byte("#!/bin/sh\necho hi\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("a=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"build", "--name", "localhost/ring0/test:7", "--entrypoint", "/usr/bin/hello",
		"--entrypoint", "-v", "--cmd", "x", "--env", "PATH=/usr/bin", "--env", "A=b c", "--workdir", "/srv",
		hello + ":/usr/bin/hello:0755", conf + ":/etc/app/conf", "--symlink", "/bin/hi=../usr/bin/hello"}
	archive := buildArchive(t, args...)
	img := checkArchive(t, archive)

	ann := img.index.Manifests[0].Annotations
	if ann[annotationRefName] != "7" || ann[annotationContainerdRef] != "localhost/ring0/test:7" {
		t.Errorf("annotations %v", ann)
	}
	c := img.config.Config
	if strings.Join(c.Entrypoint, "|") != "/usr/bin/hello|-v" || strings.Join(c.Cmd, "|") != "x" ||
		strings.Join(c.Env, "|") != "PATH=/usr/bin|A=b c" || c.WorkingDir != "/srv" {
		t.Errorf("run config %+v", c)
	}
	want := map[string]struct {
		typ  byte
		mode int64
		link string
		data string
	}{
		"bin/":          {tar.TypeDir, 0o755, "", ""},
		"bin/hi":        {tar.TypeSymlink, 0o777, "../usr/bin/hello", ""},
		"etc/":          {tar.TypeDir, 0o755, "", ""},
		"etc/app/":      {tar.TypeDir, 0o755, "", ""},
		"etc/app/conf":  {tar.TypeReg, 0o600, "", "a=1\n"},
		"usr/":          {tar.TypeDir, 0o755, "", ""},
		"usr/bin/":      {tar.TypeDir, 0o755, "", ""},
		"usr/bin/hello": {tar.TypeReg, 0o755, "", "#!/bin/sh\necho hi\n"},
	}
	if len(img.layer) != len(want) {
		t.Errorf("layer has %d entries, want %d", len(img.layer), len(want))
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

	// Determinism: the same inputs again (later, other temp dir for the output) give the same bytes.
	time.Sleep(1100 * time.Millisecond)
	if again := buildArchive(t, args...); !bytes.Equal(archive, again) {
		t.Errorf("two builds of the same inputs differ (%d vs %d bytes)", len(archive), len(again))
	}
	// A different mode is a different image.
	args[len(args)-4] = hello + ":/usr/bin/hello:0750"
	if other := buildArchive(t, args...); bytes.Equal(archive, other) {
		t.Error("a changed file mode gave the same archive")
	}
}

func TestBuildTreeAndUser(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "app")
	for _, d := range []string{"lib/x", "bin"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tree, "lib/x/a.js"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "bin/run"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../lib/x/a.js", filepath.Join(tree, "bin/a")); err != nil {
		t.Fatal(err)
	}
	args := []string{"build", "--name", "localhost/ring0/app:1", "--user", "65532:65532", "--tree", tree + ":/app"}
	archive := buildArchive(t, args...)
	img := checkArchive(t, archive)
	if img.config.Config.User != "65532:65532" {
		t.Errorf("user %q", img.config.Config.User)
	}
	for n, typ := range map[string]byte{"app/": tar.TypeDir, "app/lib/x/a.js": tar.TypeReg, "app/bin/run": tar.TypeReg, "app/bin/a": tar.TypeSymlink} {
		if h, ok := img.layer[n]; !ok || h.Typeflag != typ {
			t.Errorf("%s: %+v", n, h)
		}
	}
	if img.layer["app/bin/run"].Mode != 0o755 || img.layer["app/bin/a"].Linkname != "../lib/x/a.js" {
		t.Errorf("modes or links not kept: %o %q", img.layer["app/bin/run"].Mode, img.layer["app/bin/a"].Linkname)
	}
	if again := buildArchive(t, args...); !bytes.Equal(archive, again) {
		t.Error("two builds of the same tree differ")
	}
	// A link out of the tree would point into whatever the image's root holds: refused, however
	// it is spelled (absolute, relative, or through another link of the tree).
	for _, bad := range [][2]string{
		{"bin/out", "/etc/passwd"},
		{"bin/up", "../../.."},
		{"lib/x/loop", "../../bin/dotdot/../../.."},
	} {
		if bad[0] == "lib/x/loop" {
			if err := os.Symlink("..", filepath.Join(tree, "bin/dotdot")); err != nil {
				t.Fatal(err)
			}
		}
		link := filepath.Join(tree, bad[0])
		if err := os.Symlink(bad[1], link); err != nil {
			t.Fatal(err)
		}
		if err := run("build", []string{"--name", "n:1", "--out", filepath.Join(dir, "o.tar"), "--tree", tree + ":/app"}); err == nil {
			t.Errorf("a symlink out of the tree (%s -> %s) was accepted", bad[0], bad[1])
		}
		os.Remove(link)
	}
	for _, user := range []string{"root", "1:x", "-1"} {
		if err := run("build", []string{"--name", "n:1", "--out", filepath.Join(dir, "o.tar"), "--user", user, tree + "/lib/x/a.js:/a"}); err == nil {
			t.Errorf("--user %q accepted", user)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o.tar")
	for _, args := range [][]string{
		{"--out", out, f + ":/a"},                                     // no name
		{"--name", "n:1", f + ":/a"},                                  // no out
		{"--name", "n:1", "--out", out, f},                            // no image path
		{"--name", "n:1", "--out", out, f + ":/a:999"},                // bad mode
		{"--name", "n:1", "--out", out, dir + ":/a"},                  // a directory
		{"--name", "n:1", "--out", out, f + ":/a", f + ":/a"},         // twice
		{"--name", "n:1", "--out", out, f + ":/a", f + ":/a/b"},       // file as a parent
		{"--name", "n:1", "--out", out, "--symlink", "/a", f + ":/b"}, // bad symlink
		{"--name", "n:1", "--out", out, f + ":/"},                     // the root
	} {
		if err := run("build", args); err == nil {
			t.Errorf("build %v: no error", args)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed build left an archive")
	}
}

func TestToolbox(t *testing.T) {
	// A stand-in busybox: a script whose --list prints three applets.
	fake := filepath.Join(t.TempDir(), "busybox")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nprintf 'busybox\\nsh\\nls\\necho\\n'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	img := checkArchive(t, buildArchive(t, "toolbox", "--busybox", fake))
	if img.index.Manifests[0].Annotations[annotationContainerdRef] != toolboxName {
		t.Errorf("annotations %v", img.index.Manifests[0].Annotations)
	}
	if c := img.config.Config; strings.Join(c.Cmd, " ") != "/bin/sh" || strings.Join(c.Env, " ") != "PATH=/bin" {
		t.Errorf("run config %+v", c)
	}
	self, _ := os.ReadFile(fake)
	if h := img.layer["bin/busybox"]; h == nil || h.Mode != 0o755 || !bytes.Equal(img.data["bin/busybox"], self) {
		t.Errorf("bin/busybox: %+v", h)
	}
	for _, a := range []string{"sh", "ls", "echo"} {
		if h := img.layer["bin/"+a]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "busybox" {
			t.Errorf("bin/%s: %+v", a, h)
		}
	}
	if _, ok := img.layer["bin/busybox"]; !ok || img.layer["bin/busybox"].Typeflag != tar.TypeReg {
		t.Error("bin/busybox is not the binary")
	}
	if h := img.layer["tmp/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("tmp/: %+v", h)
	}
	if !strings.Contains(string(img.data["etc/passwd"]), "nobody:x:65534:65534:") ||
		!strings.HasPrefix(string(img.data["etc/passwd"]), "root:x:0:0:") || !strings.HasPrefix(string(img.data["etc/group"]), "root:x:0:") {
		t.Errorf("passwd %q group %q", img.data["etc/passwd"], img.data["etc/group"])
	}
}

func TestPauseImage(t *testing.T) {
	img := checkArchive(t, buildArchive(t, "pause"))
	if strings.Join(img.config.Config.Entrypoint, " ") != "/pause pause-run" || len(img.config.Config.Cmd) != 0 {
		t.Errorf("run config %+v", img.config.Config)
	}
	if img.index.Manifests[0].Annotations[annotationRefName] != "1" || img.index.Manifests[0].Annotations[annotationContainerdRef] != pauseName {
		t.Errorf("annotations %v", img.index.Manifests[0].Annotations)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(self)
	if h := img.layer["pause"]; h == nil || h.Mode != 0o755 || !bytes.Equal(img.data["pause"], want) {
		t.Errorf("pause is not a copy of this program: %+v", h)
	}
}

func TestPauseRun(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), "RING0_IMAGE_TEST_PAUSE_RUN=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			t.Fatalf("pause-run ended before any signal: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("pause-run after %v: %v (want exit 0)", sig, err)
			}
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("pause-run still running 5s after %v", sig)
		}
	}
}

func TestHTTPDImage(t *testing.T) {
	img := checkArchive(t, buildArchive(t, "httpd"))
	if strings.Join(img.config.Config.Entrypoint, " ") != "/httpd httpd-run" {
		t.Errorf("run config %+v", img.config.Config)
	}
	if img.index.Manifests[0].Annotations[annotationContainerdRef] != httpdName {
		t.Errorf("annotations %v", img.index.Manifests[0].Annotations)
	}
	if h := img.layer["httpd"]; h == nil || h.Mode != 0o755 {
		t.Errorf("httpd entry %+v", h)
	}
}

func TestHTTPDHandler(t *testing.T) {
	server := httptest.NewServer(httpdHandler("web-1"))
	defer server.Close()
	for path, want := range map[string]string{"/": "hello from web-1\nGET /\n", "/a?b=c": "hello from web-1\nGET /a?b=c\n", "/healthz": "ok\n"} {
		res, err := http.Get(server.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(body) != want {
			t.Errorf("GET %s: %d %q, want %q", path, res.StatusCode, body, want)
		}
	}
}

func TestHTTPDRun(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "RING0_IMAGE_TEST_HTTPD_RUN="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var body []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			body, _ = io.ReadAll(res.Body)
			res.Body.Close()
			break
		}
	}
	if string(body) != "ok\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("httpd-run did not answer /healthz on %s (got %q)", addr, body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("httpd-run after SIGTERM: %v (want exit 0)", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("httpd-run still running 10s after SIGTERM")
	}
}
