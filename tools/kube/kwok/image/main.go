// Command ring0-image builds OCI images without any registry or container tool: each is written
// as an OCI image-layout tar archive (one gzip layer, config, manifest, index.json with the
// image's full name) that `ctr -n k8s.io images import` accepts. Output is deterministic:
// identical inputs give byte-identical archives (sorted entries, mtime 0, owner 0:0).
//
//	ring0-image build --name REF --out FILE [--entrypoint ARG]... [--cmd ARG]... [--env K=V]...
//	                  [--workdir DIR] [--user UID[:GID]] [--symlink IMAGEPATH=TARGET]...
//	                  [--dir IMAGEPATH[:MODE]]... [--tree HOSTDIR:IMAGEDIR]...
//	                  [--toolbox /bin/busybox] [HOSTPATH:IMAGEPATH[:MODE]]...
//	ring0-image toolbox --out FILE [--busybox /bin/busybox] [--name localhost/ring0/toolbox:1]
//	ring0-image pause --out FILE [--name localhost/ring0/pause:1]
//	ring0-image pause-run      the pause image's entrypoint: waits for SIGTERM/SIGINT, reaps children
//	ring0-image httpd --out FILE [--name localhost/ring0/httpd:1]
//	ring0-image httpd-run [--listen ADDR]   the HTTP server image's entrypoint (:8080, or $PORT)
//	ring0-image push --registry 127.0.0.1:PORT [--auth-file F] [--name REF] [--replace] ARCHIVE
//	                           copies an OCI layout or `docker save` archive into Ring0's registry
//	                           (see push.go); prints "pushed NAME REPOSITORY UPLOADED PRESENT BYTES"
//
// --entrypoint and --cmd are repeatable, one argument each (like umoci's --config.entrypoint).
// MODE is octal (default: the host file's permission bits; 0755 for --dir). Parent directories are
// created 0755. --toolbox puts the toolbox image's files under the image's own (busybox and its
// applets in /bin, /etc/passwd, /etc/group, /tmp, /root; PATH=/bin unless --env sets PATH): a path
// the image gives itself (a file, --symlink or --dir) replaces the toolbox's.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  ring0-image build --name REF --out FILE [--entrypoint ARG]... [--cmd ARG]... [--env K=V]...
                    [--workdir DIR] [--user UID[:GID]] [--symlink IMAGEPATH=TARGET]...
                    [--dir IMAGEPATH[:MODE]]... [--tree HOSTDIR:IMAGEDIR]...
                    [--toolbox /bin/busybox] [HOSTPATH:IMAGEPATH[:MODE]]...
  ring0-image toolbox --out FILE [--busybox /bin/busybox] [--name `+toolboxName+`]
  ring0-image pause --out FILE [--name `+pauseName+`]
  ring0-image pause-run
  ring0-image httpd --out FILE [--name `+httpdName+`]
  ring0-image httpd-run [--listen ADDR]
  ring0-image push --registry 127.0.0.1:PORT [--auth-file F] [--name REF] [--replace] ARCHIVE`)
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	switch os.Args[1] {
	case "pause-run":
		os.Exit(pauseRun())
	case "httpd-run":
		os.Exit(httpdRun(os.Args[2:]))
	case "push":
		if err := pushCommand(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "ring0-image:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "ring0-image:", err)
		os.Exit(1)
	}
}

// parseInterleaved parses flags that may come before, between or after positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// parseFileMap reads HOSTPATH:IMAGEPATH[:MODE] into a file entry.
func parseFileMap(m string) (Entry, error) {
	parts := strings.Split(m, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return Entry{}, fmt.Errorf("file map %q: want HOSTPATH:IMAGEPATH[:MODE]", m)
	}
	st, err := os.Stat(parts[0])
	if err != nil {
		return Entry{}, err
	}
	if !st.Mode().IsRegular() {
		return Entry{}, fmt.Errorf("%s: not a regular file", parts[0])
	}
	mode := int64(st.Mode().Perm())
	if len(parts) == 3 {
		if mode, err = strconv.ParseInt(parts[2], 8, 32); err != nil || mode < 0 || mode > 0o7777 {
			return Entry{}, fmt.Errorf("file map %q: bad octal mode %q", m, parts[2])
		}
	}
	data, err := os.ReadFile(parts[0])
	if err != nil {
		return Entry{}, err
	}
	return Entry{Path: parts[1], Type: TypeFile, Mode: mode, Data: data}, nil
}

var numericUser = regexp.MustCompile(`^[0-9]{1,9}(:[0-9]{1,9})?$`)

// treeEntries copies the directory tree at host under image: directories, regular files (their
// permission bits) and symlinks (as they are: a target outside the tree is refused, so an image
// never points into the host). Anything else (sockets, devices, fifos) is refused.
func treeEntries(host, image string) ([]Entry, error) {
	root, err := filepath.Abs(host)
	if err != nil {
		return nil, err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	var entries []Entry
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		target := path.Join(image, filepath.ToSlash(rel))
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			// Relative only (an absolute target would name the host's path), and resolving — through
			// every link on the way, as the image's filesystem will — to a path inside the tree.
			if filepath.IsAbs(link) {
				return fmt.Errorf("--tree %s: symlink %s has an absolute target (%s): make it relative", host, p, link)
			}
			resolved, err := filepath.EvalSymlinks(p)
			if err != nil {
				return fmt.Errorf("--tree %s: symlink %s (%s) does not resolve: %w", host, p, link, err)
			}
			if !within(realRoot, resolved) {
				return fmt.Errorf("--tree %s: symlink %s points outside the tree (%s)", host, p, link)
			}
			entries = append(entries, Entry{Path: target, Type: TypeSymlink, Target: link})
		case info.IsDir():
			entries = append(entries, Entry{Path: target, Type: TypeDir, Mode: int64(info.Mode().Perm())})
		case info.Mode().IsRegular():
			data, err := readRegular(p)
			if err != nil {
				return err
			}
			entries = append(entries, Entry{Path: target, Type: TypeFile, Mode: int64(info.Mode().Perm()), Data: data})
		default:
			return fmt.Errorf("--tree %s: %s is neither a file, a directory nor a symlink", host, p)
		}
		return nil
	})
	return entries, err
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	r, err := filepath.Rel(root, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, "../")
}

// readRegular reads a file that must still be a regular file when opened (not swapped for a
// symlink since it was listed): O_NOFOLLOW, then a check of what was opened.
func readRegular(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: no longer a regular file", p)
	}
	return io.ReadAll(f)
}

// parseDir reads IMAGEPATH[:MODE] into a directory entry (default mode 0755).
func parseDir(d string) (Entry, error) {
	p, m, hasMode := strings.Cut(d, ":")
	if p == "" {
		return Entry{}, fmt.Errorf("--dir %q: want IMAGEPATH[:MODE]", d)
	}
	mode := int64(0o755)
	if hasMode {
		var err error
		if mode, err = strconv.ParseInt(m, 8, 32); err != nil || mode < 0 || mode > 0o7777 {
			return Entry{}, fmt.Errorf("--dir %q: bad octal mode %q", d, m)
		}
	}
	return Entry{Path: p, Type: TypeDir, Mode: mode}, nil
}

func run(cmd string, args []string) error {
	fs := flag.NewFlagSet("ring0-image "+cmd, flag.ContinueOnError)
	out := fs.String("out", "", "archive to write (required)")
	var spec Spec
	var err error
	switch cmd {
	case "build":
		name := fs.String("name", "", "full image name, e.g. localhost/ring0/toolbox:1 (required)")
		workdir := fs.String("workdir", "", "working directory")
		toolbox := fs.String("toolbox", "", "static busybox binary: the toolbox image's files under the image's")
		user := fs.String("user", "", "UID[:GID] the image runs as (numeric: no passwd lookup)")
		var entrypoint, cmdArgs, env, symlinks, dirs, trees listFlag
		fs.Var(&trees, "tree", "HOSTDIR:IMAGEDIR, a directory copied whole (repeatable)")
		fs.Var(&entrypoint, "entrypoint", "entrypoint argument (repeatable)")
		fs.Var(&cmdArgs, "cmd", "cmd argument (repeatable)")
		fs.Var(&env, "env", "K=V (repeatable)")
		fs.Var(&symlinks, "symlink", "IMAGEPATH=TARGET (repeatable)")
		fs.Var(&dirs, "dir", "IMAGEPATH[:MODE], an empty directory (repeatable)")
		maps, err := parseInterleaved(fs, args)
		if err != nil {
			return err
		}
		if *user != "" && !numericUser.MatchString(*user) {
			return fmt.Errorf("--user %q: want a numeric UID or UID:GID", *user)
		}
		spec = Spec{Name: *name, Entrypoint: entrypoint, Cmd: cmdArgs, Env: env, WorkingDir: *workdir, User: *user}
		for _, t := range trees {
			host, image, ok := strings.Cut(t, ":")
			if !ok || host == "" || image == "" {
				return fmt.Errorf("--tree %q: want HOSTDIR:IMAGEDIR", t)
			}
			entries, err := treeEntries(host, image)
			if err != nil {
				return err
			}
			spec.Entries = append(spec.Entries, entries...)
		}
		for _, m := range maps {
			e, err := parseFileMap(m)
			if err != nil {
				return err
			}
			spec.Entries = append(spec.Entries, e)
		}
		for _, s := range symlinks {
			p, target, ok := strings.Cut(s, "=")
			if !ok || p == "" || target == "" {
				return fmt.Errorf("--symlink %q: want IMAGEPATH=TARGET", s)
			}
			spec.Entries = append(spec.Entries, Entry{Path: p, Type: TypeSymlink, Target: target})
		}
		for _, d := range dirs {
			e, err := parseDir(d)
			if err != nil {
				return err
			}
			spec.Entries = append(spec.Entries, e)
		}
		for _, e := range env {
			if !strings.Contains(e, "=") {
				return fmt.Errorf("--env %q: want K=V", e)
			}
		}
		if *toolbox != "" {
			base, err := ToolboxSpec(*toolbox)
			if err != nil {
				return err
			}
			spec = OnToolbox(base, spec)
		}
	case "toolbox":
		name := fs.String("name", toolboxName, "full image name")
		busybox := fs.String("busybox", "/bin/busybox", "static busybox binary to copy (its --list gives the applets)")
		if _, err := parseInterleaved(fs, args); err != nil {
			return err
		}
		if spec, err = ToolboxSpec(*busybox); err != nil {
			return err
		}
		spec.Name = *name
	case "pause", "httpd":
		recipe, defaultName := PauseSpec, pauseName
		if cmd == "httpd" {
			recipe, defaultName = HTTPDSpec, httpdName
		}
		name := fs.String("name", defaultName, "full image name")
		if _, err := parseInterleaved(fs, args); err != nil {
			return err
		}
		self, err := os.Executable()
		if err != nil {
			return err
		}
		if spec, err = recipe(self); err != nil {
			return err
		}
		spec.Name = *name
	default:
		usage()
		return fmt.Errorf("unknown command %q", cmd)
	}
	if *out == "" {
		return fmt.Errorf("--out missing")
	}
	var buf bytes.Buffer
	if err := WriteArchive(&buf, spec); err != nil {
		return err
	}
	// Write next to the target and rename, so a failed build leaves no half archive.
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".ring0-image-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	fmt.Printf("%s %s (%d bytes)\n", spec.Name, *out, buf.Len())
	return nil
}
