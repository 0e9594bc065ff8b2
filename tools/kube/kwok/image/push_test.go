package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseImageRef(t *testing.T) {
	for name, want := range map[string]string{
		"nginx":                              "docker.io/library/nginx:latest",
		"nginx:1.27":                         "docker.io/library/nginx:1.27",
		"bitnami/redis:7":                    "docker.io/bitnami/redis:7",
		"docker.io/nginx":                    "docker.io/library/nginx:latest",
		"index.docker.io/library/nginx:1":    "docker.io/library/nginx:1",
		"quay.io/prometheus/node-exporter":   "quay.io/prometheus/node-exporter:latest",
		"registry.k8s.io/pause:3.10":         "registry.k8s.io/pause:3.10",
		"localhost/ring0/toolbox:1":          "localhost/ring0/toolbox:1",
		"localhost:5000/team/app:v1.2_rc-3":  "localhost:5000/team/app:v1.2_rc-3",
		"ghcr.io/org/a__b/c.d-e:sha-abc1234": "ghcr.io/org/a__b/c.d-e:sha-abc1234",
	} {
		ref, err := ParseImageRef(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if ref.String() != want {
			t.Errorf("%s → %s, want %s", name, ref, want)
		}
	}
	if ref, _ := ParseImageRef("localhost:5000/app"); ref.Repository() != "localhost-5000/app" {
		t.Errorf("repository of localhost:5000/app = %s", ref.Repository())
	}
	if ref, _ := ParseImageRef("nginx"); ref.Repository() != "docker.io/library/nginx" {
		t.Errorf("repository of nginx = %s", ref.Repository())
	}
	for name, fragment := range map[string]string{
		"":                                  "empty",
		"nginx@sha256:abcd":                 "digest",
		"Nginx":                             "path component",
		"nginx:":                            "tag",
		"nginx:-x":                          "tag",
		"a/../b":                            "path component",
		"quay.io//x":                        "path component",
		"bad_host.io:99x/a":                 "host",
		"nginx:" + strings.Repeat("x", 129): "tag",
	} {
		if _, err := ParseImageRef(name); err == nil || !strings.Contains(err.Error(), fragment) {
			t.Errorf("%q: error %v, want one about %s", name, err, fragment)
		}
	}
}

func tarOf(t *testing.T, files map[string][]byte, extra ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range extra {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "archive.tar")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDockerArchive(t *testing.T) {
	layer := tarOf(t, map[string][]byte{"hello.txt": []byte("hi\n")})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(layer)
	zw.Close()
	config := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	manifestJSON := []byte(`[{"Config":"abc.json","RepoTags":["web:1","example.com/team/web:1"],"Layers":["l1/layer.tar","l2/layer.tar.gz"]}]`)
	archive := tarOf(t, map[string][]byte{
		"manifest.json":   manifestJSON,
		"abc.json":        config,
		"l1/layer.tar":    layer,
		"l2/layer.tar.gz": gz.Bytes(),
	}, &tar.Header{Typeflag: tar.TypeSymlink, Name: "evil", Linkname: "/etc/passwd"})
	// Gzipped as a whole too: `docker save | gzip` is common.
	var whole bytes.Buffer
	zw = gzip.NewWriter(&whole)
	zw.Write(archive)
	zw.Close()
	for _, b := range [][]byte{archive, whole.Bytes()} {
		a, err := LoadArchive(writeFile(t, b), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if len(a.images) != 1 || strings.Join(a.images[0].names, ",") != "web:1,example.com/team/web:1" {
			t.Fatalf("images %+v", a.images)
		}
		var m manifest
		if err := json.Unmarshal(a.images[0].manifest, &m); err != nil {
			t.Fatal(err)
		}
		if m.MediaType != mediaTypeManifest || m.Config.Digest != digestOf(config) || m.Config.MediaType != mediaTypeConfig {
			t.Errorf("manifest %+v", m)
		}
		if len(m.Layers) != 2 || m.Layers[0].MediaType != mediaTypeLayerTar || m.Layers[1].MediaType != mediaTypeLayer ||
			m.Layers[0].Digest != digestOf(layer) || m.Layers[1].Digest != digestOf(gz.Bytes()) {
			t.Errorf("layers %+v", m.Layers)
		}
		if _, err := os.Lstat(filepath.Join(a.dir, "evil")); !os.IsNotExist(err) {
			t.Errorf("a symlink member was extracted: %v", err)
		}
		os.RemoveAll(a.dir)
	}
}

func TestLoadOCIArchive(t *testing.T) {
	var buf bytes.Buffer
	spec := Spec{Name: "localhost/ring0/test:2", Entries: []Entry{{Path: "/x", Type: TypeFile, Mode: 0o644, Data: []byte("x")}}}
	if err := WriteArchive(&buf, spec); err != nil {
		t.Fatal(err)
	}
	a, err := LoadArchive(writeFile(t, buf.Bytes()), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(a.dir)
	if len(a.images) != 1 || a.images[0].names[0] != spec.Name || a.images[0].mediaType != mediaTypeManifest {
		t.Fatalf("images %+v", a.images)
	}
	if len(a.blobs) != 3 {
		t.Errorf("blobs %d, want layer, config and manifest", len(a.blobs))
	}
}

func TestLoadArchiveRefusals(t *testing.T) {
	for what, tc := range map[string]struct {
		archive  []byte
		fragment string
	}{
		"not a tar":      {[]byte("hello, this is not a tar archive at all, not even close........"), "not a tar"},
		"no image files": {tarOf(t, map[string][]byte{"readme": []byte("x")}), "neither an OCI image layout"},
		"escape":         {tarOf(t, map[string][]byte{"../outside": []byte("x")}), "escapes the archive"},
		"corrupt blob": {tarOf(t, map[string][]byte{
			"index.json": []byte(`{"manifests":[]}`),
			"blobs/sha256/" + strings.Repeat("0", 64): []byte("not what the name says"),
		}), "corrupt"},
		"docker names outside": {tarOf(t, map[string][]byte{
			"manifest.json": []byte(`[{"Config":"../../etc/passwd","RepoTags":["a:1"],"Layers":[]}]`),
		}), "outside the archive"},
		"empty index": {tarOf(t, map[string][]byte{"index.json": []byte(`{"manifests":[]}`)}), "no images"},
	} {
		_, err := LoadArchive(writeFile(t, tc.archive), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.fragment) {
			t.Errorf("%s: error %v, want one containing %q", what, err, tc.fragment)
		}
	}
}
