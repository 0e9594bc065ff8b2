package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// buildRootfs (re)builds the sandboxes' root in dir: a statically linked busybox and its applets,
// an /etc with root and nobody, and the mount points the sandbox fills in. Nothing of the host or
// of Ring0's state is in it; it is built anew on every start so it never drifts.
func buildRootfs(dir, busybox string) error {
	info, err := os.Stat(busybox)
	if err != nil {
		return fmt.Errorf("no busybox at %s (Debian: apt-get install busybox-static): %w", busybox, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a file", busybox)
	}
	applets, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return fmt.Errorf("%s --list: %w", busybox, err)
	}
	staging := fmt.Sprintf("%s.building-%d", dir, os.Getpid())
	if err := os.RemoveAll(staging); err != nil {
		return err
	}
	for _, sub := range []string{"bin", "etc", "proc", "tmp", "dev", "home", ".oldroot", "usr"} {
		if err := os.MkdirAll(filepath.Join(staging, sub), 0o755); err != nil {
			return err
		}
	}
	if err := copyFile(busybox, filepath.Join(staging, "bin", "busybox"), 0o755); err != nil {
		return err
	}
	for _, applet := range strings.Fields(string(applets)) {
		if applet == "busybox" || strings.ContainsAny(applet, "/.") {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(staging, "bin", applet)); err != nil && !os.IsExist(err) {
			return err
		}
	}
	if err := os.Symlink("../bin", filepath.Join(staging, "usr", "bin")); err != nil {
		return err
	}
	files := map[string]string{
		"etc/passwd":   "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/sh\n",
		"etc/group":    "root:x:0:\nnogroup:x:65534:\n",
		"etc/hosts":    "127.0.0.1\tlocalhost\n::1\tlocalhost\n",
		"etc/hostname": "sandbox\n",
		"etc/os-release": "NAME=\"Ring0 sandbox\"\nID=ring0-sandbox\n" +
			"PRETTY_NAME=\"Ring0 sandbox on a simulated node (busybox)\"\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(staging, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	if err := os.Chmod(staging, 0o755); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(staging, dir)
}

func copyFile(from, to string, mode os.FileMode) error {
	source, err := os.Open(from)
	if err != nil {
		return err
	}
	defer source.Close()
	target, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(target, source); err != nil {
		target.Close()
		return err
	}
	return target.Close()
}
