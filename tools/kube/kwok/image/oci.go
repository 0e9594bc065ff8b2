package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"
)

// Media types of the OCI image spec (v1.1).
const (
	mediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"

	annotationRefName       = "org.opencontainers.image.ref.name"
	annotationContainerdRef = "io.containerd.image.name"

	imageArch = "amd64"
	imageOS   = "linux"
)

// epoch is the only timestamp written anywhere: identical inputs give identical archives.
var epoch = time.Unix(0, 0).UTC()

// EntryType is what an Entry becomes in the layer.
type EntryType int

const (
	TypeFile EntryType = iota
	TypeDir
	TypeSymlink
)

// Entry is one path of the image's single layer. Paths are absolute image paths ("/bin/sh").
type Entry struct {
	Path   string
	Type   EntryType
	Mode   int64  // permission bits (files and directories)
	Data   []byte // TypeFile
	Target string // TypeSymlink
}

// Spec describes an image: its full name (e.g. localhost/ring0/toolbox:1), its run config and
// the contents of its one layer.
type Spec struct {
	Name       string
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	// User the image runs as when a pod names none ("65532:65532"); empty: root.
	User    string
	Entries []Entry
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

type runConfig struct {
	User       string   `json:"User,omitempty"`
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	Env        []string `json:"Env,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

type imageConfig struct {
	Created      string    `json:"created"`
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Config       runConfig `json:"config"`
	RootFS       rootFS    `json:"rootfs"`
}

type ociLayout struct {
	ImageLayoutVersion string `json:"imageLayoutVersion"`
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// refTag is the tag of a full image name: "localhost/ring0/toolbox:1" → "1" (a name without a
// tag gets "latest", as containerd would).
func refTag(name string) string {
	last := name[strings.LastIndex(name, "/")+1:]
	if i := strings.LastIndex(last, ":"); i >= 0 {
		return last[i+1:]
	}
	return "latest"
}

// cleanPath turns an image path into a layer member name ("/bin/sh" → "bin/sh").
func cleanPath(p string) (string, error) {
	c := strings.TrimPrefix(path.Clean("/"+p), "/")
	if c == "" || c == "." {
		return "", fmt.Errorf("image path %q names the root", p)
	}
	return c, nil
}

// Layer returns the uncompressed tar of the entries: sorted by path, parents created as
// 0755 directories when not given, owner 0:0, mtime the epoch.
func Layer(entries []Entry) ([]byte, error) {
	byPath := map[string]Entry{}
	for _, e := range entries {
		p, err := cleanPath(e.Path)
		if err != nil {
			return nil, err
		}
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("image path /%s given twice", p)
		}
		e.Path = p
		byPath[p] = e
	}
	for p := range byPath {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if prev, ok := byPath[d]; ok {
				if prev.Type != TypeDir {
					return nil, fmt.Errorf("/%s is needed as a directory for /%s", d, p)
				}
				continue
			}
			byPath[d] = Entry{Path: d, Type: TypeDir, Mode: 0o755}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		e := byPath[p]
		h := &tar.Header{Name: p, Mode: e.Mode & 0o7777, ModTime: epoch, Format: tar.FormatPAX}
		switch e.Type {
		case TypeFile:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Data))
		case TypeDir:
			h.Typeflag, h.Name = tar.TypeDir, p+"/"
		case TypeSymlink:
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.Target, 0o777
		default:
			return nil, fmt.Errorf("/%s: unknown entry type %d", p, e.Type)
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if e.Type == TypeFile {
			if _, err := tw.Write(e.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	// The header stays empty: no name, mtime 0.
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only fixed struct types are marshalled
	}
	return b
}

// WriteArchive writes the image as an OCI image-layout tar (what `ctr images import` reads):
// oci-layout, index.json and blobs/sha256/<hex> for the layer, the config and the manifest.
func WriteArchive(w io.Writer, spec Spec) error {
	if spec.Name == "" {
		return fmt.Errorf("image name missing")
	}
	layer, err := Layer(spec.Entries)
	if err != nil {
		return err
	}
	layerGz, err := gzipBytes(layer)
	if err != nil {
		return err
	}
	config := marshal(imageConfig{
		Created:      epoch.Format(time.RFC3339),
		Architecture: imageArch,
		OS:           imageOS,
		Config:       runConfig{User: spec.User, Entrypoint: spec.Entrypoint, Cmd: spec.Cmd, Env: spec.Env, WorkingDir: spec.WorkingDir},
		RootFS:       rootFS{Type: "layers", DiffIDs: []string{digestOf(layer)}},
	})
	man := marshal(manifest{
		SchemaVersion: 2,
		MediaType:     mediaTypeManifest,
		Config:        descriptor{MediaType: mediaTypeConfig, Digest: digestOf(config), Size: int64(len(config))},
		Layers:        []descriptor{{MediaType: mediaTypeLayer, Digest: digestOf(layerGz), Size: int64(len(layerGz))}},
	})
	idx := marshal(index{
		SchemaVersion: 2,
		MediaType:     mediaTypeIndex,
		Manifests: []descriptor{{
			MediaType: mediaTypeManifest, Digest: digestOf(man), Size: int64(len(man)),
			Annotations: map[string]string{annotationRefName: refTag(spec.Name), annotationContainerdRef: spec.Name},
			Platform:    &platform{Architecture: imageArch, OS: imageOS},
		}},
	})

	files := map[string][]byte{
		"oci-layout": marshal(ociLayout{ImageLayoutVersion: "1.0.0"}),
		"index.json": idx,
	}
	for _, b := range [][]byte{layerGz, config, man} {
		files["blobs/sha256/"+strings.TrimPrefix(digestOf(b), "sha256:")] = b
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)

	tw := tar.NewWriter(w)
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	for _, n := range names {
		b := files[n]
		h := &tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(b)), ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	return tw.Close()
}
