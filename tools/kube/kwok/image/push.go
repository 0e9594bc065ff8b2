package main

// `ring0-image push` copies the images of an archive into Ring0's local registry (the
// distribution registry real nodes pull from). Two archive kinds are read, plain or gzipped:
//   - an OCI image layout (oci-layout, index.json, blobs/): what `ctr images export`, `skopeo copy
//     oci-archive:`, `docker save` since Docker 25 and ring0-image itself write;
//   - a Docker archive (manifest.json with Config, RepoTags, Layers): `docker save` before 25.
//     Its layers become an OCI manifest, layer media types from their magic bytes.
// Every image lands in the registry under a repository that keeps its registry host
// ("nginx" → docker.io/library/nginx), so containerd, told to use the local registry as the
// only host for docker.io, quay.io, … (hosts.toml with override_path), finds it unchanged.

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

const (
	mediaTypeDockerManifest     = "application/vnd.docker.distribution.manifest.v2+json"
	mediaTypeDockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaTypeLayerTar           = "application/vnd.oci.image.layer.v1.tar"
	mediaTypeLayerZstd          = "application/vnd.oci.image.layer.v1.tar+zstd"
	defaultRegistryHost         = "docker.io"
)

// ImageRef is a normalized image name: docker.io/library/nginx:latest → {docker.io, library/nginx, latest}.
type ImageRef struct {
	Host string
	Path string
	Tag  string
}

func (r ImageRef) String() string { return r.Host + "/" + r.Path + ":" + r.Tag }

// Repository is the image's repository in Ring0's registry: its host, then its path
// (docker.io/library/nginx; a host's port becomes "-port": localhost:5000/app → localhost-5000/app).
func (r ImageRef) Repository() string { return strings.ReplaceAll(r.Host, ":", "-") + "/" + r.Path }

var (
	pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	tagPattern    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	hostPattern   = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]{1,5})?$`)
)

// ParseImageRef normalizes an image name as docker and the kubelet do: no host means docker.io,
// a one-part docker.io path gets "library/", no tag means "latest". Digests cannot be pushed to a
// name: the registry needs a tag.
func ParseImageRef(name string) (ImageRef, error) {
	if name == "" {
		return ImageRef{}, errors.New("image name is empty")
	}
	if strings.Contains(name, "@") {
		return ImageRef{}, fmt.Errorf("image name %q has a digest: give a tag instead (name:tag)", name)
	}
	rest, tag := name, "latest"
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		rest, tag = name[:i], name[i+1:]
	}
	if !tagPattern.MatchString(tag) {
		return ImageRef{}, fmt.Errorf("image name %q: tag %q is not valid (letters, digits, _ . -; at most 128)", name, tag)
	}
	host, p := defaultRegistryHost, rest
	if first, after, ok := strings.Cut(rest, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		host, p = first, after
	}
	if !hostPattern.MatchString(host) {
		return ImageRef{}, fmt.Errorf("image name %q: registry host %q is not valid", name, host)
	}
	if host == "index.docker.io" || host == "registry-1.docker.io" {
		host = defaultRegistryHost
	}
	if host == defaultRegistryHost && !strings.Contains(p, "/") {
		p = "library/" + p
	}
	for _, c := range strings.Split(p, "/") {
		if !pathComponent.MatchString(c) {
			return ImageRef{}, fmt.Errorf("image name %q: %q is not a valid path component (lowercase letters, digits, separators . _ __ -)", name, c)
		}
	}
	if len(p) > 200 {
		return ImageRef{}, fmt.Errorf("image name %q is too long", name)
	}
	return ImageRef{Host: host, Path: p, Tag: tag}, nil
}

// blobFile is a blob of the archive, extracted to disk.
type blobFile struct {
	file      string
	size      int64
	mediaType string
}

// archiveImage is one image of an archive: its names (may be empty), its top manifest or index
// (raw bytes, pushed verbatim) and every blob it may need, by digest.
type archiveImage struct {
	names     []string
	mediaType string
	manifest  []byte
}

type archive struct {
	dir    string
	images []archiveImage
	blobs  map[string]blobFile // digest → file
	raw    map[string][]byte   // digest → manifest or index bytes (small, read into memory)
}

// extract unpacks an archive (tar, optionally gzipped) into dir, keeping only regular files with
// clean relative names: nothing is written outside dir and no link is followed.
func extract(archivePath, dir string) ([]string, error) {
	f, err := os.Open(archivePath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", archivePath, err)
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s is not a tar archive (want `docker save` or OCI layout output): %w", archivePath, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." || strings.HasPrefix(name, "/") || name == ".." || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("%s: member %q escapes the archive", archivePath, h.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return nil, err
		}
		if err := roomFor(dir, h.Size); err != nil {
			return nil, fmt.Errorf("%s: %w", archivePath, err)
		}
		out, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		// At most what the header says (a tar member cannot grow), so the room checked is the room used.
		_, err = io.Copy(out, io.LimitReader(tr, h.Size))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s has no files", archivePath)
	}
	return names, nil
}

// keepFree is the disk space an extraction leaves free (the registry and Ring0's state share it).
const keepFree = 1 << 30

// roomFor refuses a file of `size` bytes when writing it would leave less than keepFree free.
func roomFor(dir string, size int64) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return err
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if size < 0 || free-size < keepFree {
		return fmt.Errorf("not enough disk space to unpack it (%d MiB free, %d MiB more needed, 1 GiB kept free)", free>>20, size>>20)
	}
	return nil
}

// readSmall reads a JSON document of the archive (index.json, manifest.json), at most 4 MiB.
func readSmall(file string) ([]byte, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if st.Size() > 4<<20 {
		return nil, fmt.Errorf("%s is larger than 4 MiB", filepath.Base(file))
	}
	return os.ReadFile(file)
}

func fileDigest(file string) (string, int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// layerMediaType tells a layer's compression by its first bytes.
func layerMediaType(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	magic := make([]byte, 4)
	n, _ := io.ReadFull(f, magic)
	switch {
	case n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		return mediaTypeLayer, nil
	case n == 4 && bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return mediaTypeLayerZstd, nil
	default:
		return mediaTypeLayerTar, nil
	}
}

// LoadArchive reads an OCI layout or Docker archive into a temporary directory under tmpRoot.
// The caller removes a.dir.
func LoadArchive(archivePath, tmpRoot string) (*archive, error) {
	dir, err := os.MkdirTemp(tmpRoot, ".ring0-push-*")
	if err != nil {
		return nil, err
	}
	a := &archive{dir: dir, blobs: map[string]blobFile{}, raw: map[string][]byte{}}
	fail := func(err error) (*archive, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	names, err := extract(archivePath, dir)
	if err != nil {
		return fail(err)
	}
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	switch {
	case has["index.json"]:
		err = a.loadOCI(names)
	case has["manifest.json"]:
		err = a.loadDocker()
	default:
		err = fmt.Errorf("%s is neither an OCI image layout (index.json) nor a Docker archive (manifest.json)", archivePath)
	}
	if err != nil {
		return fail(err)
	}
	if len(a.images) == 0 {
		return fail(fmt.Errorf("%s has no images", archivePath))
	}
	return a, nil
}

func (a *archive) loadOCI(names []string) error {
	for _, n := range names {
		if !strings.HasPrefix(n, "blobs/") {
			continue
		}
		parts := strings.Split(n, "/")
		if len(parts) != 3 {
			continue
		}
		digest := parts[1] + ":" + parts[2]
		file := filepath.Join(a.dir, filepath.FromSlash(n))
		actual, size, err := fileDigest(file)
		if err != nil {
			return err
		}
		if actual != digest {
			return fmt.Errorf("blob %s has digest %s: the archive is corrupt", n, actual)
		}
		a.blobs[digest] = blobFile{file: file, size: size}
	}
	var idx struct {
		Manifests []descriptor `json:"manifests"`
	}
	b, err := readSmall(filepath.Join(a.dir, "index.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return fmt.Errorf("index.json: %w", err)
	}
	for _, d := range idx.Manifests {
		raw, err := a.readRaw(d.Digest)
		if err != nil {
			return err
		}
		var names []string
		if n := d.Annotations[annotationContainerdRef]; n != "" {
			names = append(names, n)
		} else if n := d.Annotations[annotationRefName]; n != "" {
			names = append(names, n)
		}
		a.images = append(a.images, archiveImage{names: names, mediaType: d.MediaType, manifest: raw})
	}
	return nil
}

func (a *archive) readRaw(digest string) ([]byte, error) {
	if b, ok := a.raw[digest]; ok {
		return b, nil
	}
	blob, ok := a.blobs[digest]
	if !ok {
		return nil, fmt.Errorf("the archive lacks %s", digest)
	}
	if blob.size > 4<<20 {
		return nil, fmt.Errorf("manifest %s is larger than 4 MiB", digest)
	}
	b, err := os.ReadFile(blob.file)
	if err != nil {
		return nil, err
	}
	a.raw[digest] = b
	return b, nil
}

// loadDocker turns each manifest.json entry into an OCI manifest over the same files.
func (a *archive) loadDocker() error {
	b, err := readSmall(filepath.Join(a.dir, "manifest.json"))
	if err != nil {
		return err
	}
	var entries []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		return fmt.Errorf("manifest.json: %w", err)
	}
	add := func(member, mediaType string) (descriptor, error) {
		clean := path.Clean(member)
		if strings.HasPrefix(clean, "/") || strings.HasPrefix(clean, "..") {
			return descriptor{}, fmt.Errorf("manifest.json names %q outside the archive", member)
		}
		file := filepath.Join(a.dir, filepath.FromSlash(clean))
		digest, size, err := fileDigest(file)
		if err != nil {
			return descriptor{}, fmt.Errorf("manifest.json names %q: %w", member, err)
		}
		if mediaType == "" {
			if mediaType, err = layerMediaType(file); err != nil {
				return descriptor{}, err
			}
		}
		a.blobs[digest] = blobFile{file: file, size: size, mediaType: mediaType}
		return descriptor{MediaType: mediaType, Digest: digest, Size: size}, nil
	}
	for _, e := range entries {
		config, err := add(e.Config, mediaTypeConfig)
		if err != nil {
			return err
		}
		m := manifest{SchemaVersion: 2, MediaType: mediaTypeManifest, Config: config}
		for _, l := range e.Layers {
			d, err := add(l, "")
			if err != nil {
				return err
			}
			m.Layers = append(m.Layers, d)
		}
		a.images = append(a.images, archiveImage{names: e.RepoTags, mediaType: mediaTypeManifest, manifest: marshal(m)})
	}
	return nil
}

// registryClient speaks the distribution API (v2) to Ring0's registry over plain HTTP on loopback.
type registryClient struct {
	base   string // http://127.0.0.1:PORT
	client *http.Client
	// user and password of Ring0's registry (basic auth), from --auth-file.
	user, password string
}

func (c *registryClient) do(method, target string, body io.Reader, size int64, contentType string) (*http.Response, error) {
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.ContentLength = size
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	return c.client.Do(req)
}

func registryError(resp *http.Response, what string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return fmt.Errorf("%s: registry answered %s: %s", what, resp.Status, strings.TrimSpace(string(b)))
}

func (c *registryClient) pushBlob(repo, digest string, blob blobFile) (bool, error) {
	resp, err := c.do(http.MethodHead, c.base+"/v2/"+repo+"/blobs/"+digest, nil, 0, "")
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return false, nil
	}
	resp, err = c.do(http.MethodPost, c.base+"/v2/"+repo+"/blobs/uploads/", nil, 0, "")
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return false, registryError(resp, "starting the upload of "+digest)
	}
	loc, err := url.Parse(c.base + "/")
	if err != nil {
		return false, err
	}
	if loc, err = loc.Parse(resp.Header.Get("Location")); err != nil {
		return false, fmt.Errorf("upload location: %w", err)
	}
	q := loc.Query()
	q.Set("digest", digest)
	loc.RawQuery = q.Encode()
	f, err := os.Open(blob.file)
	if err != nil {
		return false, err
	}
	defer f.Close()
	resp, err = c.do(http.MethodPut, loc.String(), f, blob.size, "application/octet-stream")
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return false, registryError(resp, "uploading "+digest)
	}
	return true, nil
}

func (c *registryClient) putManifest(repo, ref, mediaType string, body []byte) error {
	resp, err := c.do(http.MethodPut, c.base+"/v2/"+repo+"/manifests/"+ref, bytes.NewReader(body), int64(len(body)), mediaType)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return registryError(resp, "storing manifest "+ref)
	}
	return nil
}

// pushTree pushes a manifest (its config and layers first) or an index (its present children
// first, each by digest). It answers the platform children that the archive lacks.
func (c *registryClient) pushTree(a *archive, repo, mediaType string, raw []byte, asRef string, stats *pushStats) (missing int, err error) {
	var doc struct {
		MediaType string       `json:"mediaType"`
		Config    *descriptor  `json:"config"`
		Layers    []descriptor `json:"layers"`
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 0, fmt.Errorf("manifest %s: %w", digestOf(raw), err)
	}
	if mediaType == "" {
		mediaType = doc.MediaType
	}
	switch mediaType {
	case mediaTypeIndex, mediaTypeDockerManifestList:
		for _, child := range doc.Manifests {
			childRaw, err := a.readRaw(child.Digest)
			if err != nil {
				missing++
				continue
			}
			if _, err := c.pushTree(a, repo, child.MediaType, childRaw, child.Digest, stats); err != nil {
				return 0, err
			}
		}
		if missing > 0 {
			return missing, nil // the caller pushes one platform's manifest under the tag instead
		}
	case mediaTypeManifest, mediaTypeDockerManifest:
		if doc.Config == nil {
			return 0, fmt.Errorf("manifest %s has no config", digestOf(raw))
		}
		for _, d := range append([]descriptor{*doc.Config}, doc.Layers...) {
			blob, ok := a.blobs[d.Digest]
			if !ok {
				return 0, fmt.Errorf("the archive lacks blob %s of manifest %s", d.Digest, digestOf(raw))
			}
			uploaded, err := c.pushBlob(repo, d.Digest, blob)
			if err != nil {
				return 0, err
			}
			if uploaded {
				stats.uploaded++
				stats.bytes += blob.size
			} else {
				stats.present++
			}
		}
	default:
		return 0, fmt.Errorf("manifest media type %q is not supported", mediaType)
	}
	return missing, c.putManifest(repo, asRef, mediaType, raw)
}

type pushStats struct {
	uploaded, present int
	bytes             int64
}

// linuxAmd64 finds, in an index, the manifest for this machine's platform that the archive has.
func (a *archive) linuxAmd64(raw []byte) (descriptor, []byte, bool) {
	var doc struct {
		Manifests []descriptor `json:"manifests"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return descriptor{}, nil, false
	}
	for _, d := range doc.Manifests {
		if d.Platform == nil || d.Platform.OS != imageOS || d.Platform.Architecture != imageArch {
			continue
		}
		if b, err := a.readRaw(d.Digest); err == nil {
			return d, b, true
		}
	}
	return descriptor{}, nil, false
}

// reservedPrefix names Ring0's own images (the sandbox, the toolbox that operators' node shells
// run as root on the host): only Ring0 itself pushes them (--allow-reserved).
const reservedPrefix = "localhost/ring0/"

// top is what an image's tag will name: its index when the archive has every platform, else its
// linux/amd64 manifest (a single-platform export of a multi-platform image).
func (a *archive) top(img archiveImage) (string, []byte, error) {
	if img.mediaType != mediaTypeIndex && img.mediaType != mediaTypeDockerManifestList {
		return img.mediaType, img.manifest, nil
	}
	var doc struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(img.manifest, &doc); err != nil {
		return "", nil, fmt.Errorf("index %s: %w", digestOf(img.manifest), err)
	}
	complete := true
	for _, child := range doc.Manifests {
		if _, ok := a.blobs[child.Digest]; !ok {
			complete = false
		}
	}
	if complete {
		return img.mediaType, img.manifest, nil
	}
	d, raw, ok := a.linuxAmd64(img.manifest)
	if !ok {
		return "", nil, errors.New("the archive has no linux/amd64 image (export it with --platform linux/amd64)")
	}
	return d.MediaType, raw, nil
}

// existingDigest is the digest the registry has under repo:tag, or "" when it has none.
func (c *registryClient) existingDigest(repo, tag string) (string, error) {
	req, err := http.NewRequest(http.MethodHead, c.base+"/v2/"+repo+"/manifests/"+tag, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", strings.Join([]string{mediaTypeManifest, mediaTypeIndex, mediaTypeDockerManifest, mediaTypeDockerManifestList}, ", "))
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return resp.Header.Get("Docker-Content-Digest"), nil
	case http.StatusNotFound:
		return "", nil
	default:
		return "", registryError(resp, "reading "+repo+":"+tag)
	}
}

type plannedPush struct {
	ref       ImageRef
	mediaType string
	manifest  []byte
}

func pushCommand(args []string) error {
	fs := flag.NewFlagSet("ring0-image push", flag.ContinueOnError)
	registry := fs.String("registry", "", "the registry's address, 127.0.0.1:PORT (required)")
	name := fs.String("name", "", "push the archive's one image under this name instead of its own")
	replace := fs.Bool("replace", false, "replace a tag the registry has with another image")
	allowReserved := fs.Bool("allow-reserved", false, "allow names under "+reservedPrefix+" (Ring0's own images)")
	authFile := fs.String("auth-file", "", `a file holding "user:password" for the registry`)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("push: give exactly one archive: ring0-image push --registry 127.0.0.1:PORT [--name REF] [--replace] ARCHIVE")
	}
	host, _, err := net.SplitHostPort(*registry)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		return fmt.Errorf("--registry %q: want a loopback address 127.0.0.1:PORT (Ring0's registry)", *registry)
	}
	a, err := LoadArchive(pos[0], os.TempDir())
	if err != nil {
		return err
	}
	defer os.RemoveAll(a.dir)
	if *name != "" && len(a.images) != 1 {
		return fmt.Errorf("--name: the archive has %d images; push it without --name (each keeps its own)", len(a.images))
	}
	c := &registryClient{base: "http://" + *registry, client: &http.Client{Timeout: 30 * time.Minute}}
	if *authFile != "" {
		b, err := readSmall(*authFile)
		if err != nil {
			return fmt.Errorf("--auth-file: %w", err)
		}
		user, password, ok := strings.Cut(strings.TrimSpace(string(b)), ":")
		if !ok || user == "" || password == "" {
			return fmt.Errorf("--auth-file %s: want \"user:password\"", *authFile)
		}
		c.user, c.password = user, password
	}

	// Every name is checked before anything is pushed: a refusal leaves the registry as it was.
	var plan []plannedPush
	for _, img := range a.images {
		names := img.names
		if *name != "" {
			names = []string{*name}
		}
		if len(names) == 0 {
			return fmt.Errorf("image %s has no name in the archive: give one with --name REF", digestOf(img.manifest))
		}
		mediaType, raw, err := a.top(img)
		if err != nil {
			return err
		}
		for _, n := range names {
			ref, err := ParseImageRef(n)
			if err != nil {
				return err
			}
			if strings.HasPrefix(ref.String(), reservedPrefix) && !*allowReserved {
				return fmt.Errorf("%s: names under %s are Ring0's own images; push yours under another name (--name)", ref, reservedPrefix)
			}
			existing, err := c.existingDigest(ref.Repository(), ref.Tag)
			if err != nil {
				return fmt.Errorf("%s: %w", ref, err)
			}
			if existing != "" && existing != digestOf(raw) && !*replace {
				return fmt.Errorf("%s is already in the registry as another image (%s): pods using it would change; add --replace to replace it", ref, existing)
			}
			plan = append(plan, plannedPush{ref: ref, mediaType: mediaType, manifest: raw})
		}
	}
	for _, p := range plan {
		var stats pushStats
		if _, err := c.pushTree(a, p.ref.Repository(), p.mediaType, p.manifest, p.ref.Tag, &stats); err != nil {
			return fmt.Errorf("%s: %w", p.ref, err)
		}
		fmt.Printf("pushed %s %s %d %d %d\n", p.ref, p.ref.Repository(), stats.uploaded, stats.present, stats.bytes)
	}
	if len(plan) == 0 {
		return errors.New("nothing pushed")
	}
	return nil
}
