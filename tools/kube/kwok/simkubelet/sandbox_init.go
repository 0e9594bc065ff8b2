package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Files of /proc that tell of the host (its keys, timers, devices) or write to its kernel: each is
// covered by /dev/null, as runc does for containers.
var maskedProcFiles = []string{"kcore", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug", "sysrq-trigger"}

// Directories of /proc that stay readable but never writable.
var readOnlyProcDirs = []string{"sys", "bus", "fs", "irq"}

// Directories of /proc about the host's hardware: covered by an empty read-only tmpfs.
var maskedProcDirs = []string{"acpi", "scsi", "asound"}

// Device nodes a shell needs; bound from the host one by one (no other device exists inside).
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// sandboxInit runs as the first process of new mount, PID, network, IPC and UTS namespaces, still
// as root: it waits for its spec (sent once it sits in its cgroups), builds its view of the world —
// a read-only root from the busybox tree, fresh /proc, small tmpfs for /tmp and /home, a /dev of a
// few device nodes, loopback only — then gives up every privilege and becomes the command.
func sandboxInit() {
	// Privileges, no_new_privs and the seccomp filter are per thread: all of it, and the execve
	// that hands them to the command, must happen on this one.
	runtime.LockOSThread()
	step, err := setUpSandbox()
	if err != nil {
		// The tenant sees the step, never host paths; the operator finds the rest in the exit code.
		fmt.Fprintf(os.Stderr, "ring0: the sandbox could not be set up (%s)\n", step)
		os.Exit(125)
	}
}

func setUpSandbox() (string, error) {
	specFile := os.NewFile(3, "spec")
	var spec sandboxSpec
	if err := json.NewDecoder(specFile).Decode(&spec); err != nil {
		return "reading its spec", err
	}
	specFile.Close()
	if len(spec.Argv) == 0 {
		return "reading its spec", errors.New("no command")
	}
	root := spec.Rootfs
	mounts := []struct {
		what string
		do   func() error
	}{
		{"private mounts", func() error { return unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "") }},
		{"root", func() error { return unix.Mount(root, root, "", unix.MS_BIND, "") }},
		{"/proc", func() error { return mountProc(filepath.Join(root, "proc")) }},
		{"/tmp", func() error {
			return unix.Mount("tmpfs", filepath.Join(root, "tmp"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC,
				fmt.Sprintf("size=%d,mode=1777", spec.TmpfsBytes))
		}},
		{"/home", func() error {
			return unix.Mount("tmpfs", filepath.Join(root, "home"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC,
				fmt.Sprintf("size=%d,mode=0755,uid=%d,gid=%d", spec.TmpfsBytes, nobody, nobody))
		}},
		{"/dev", func() error { return mountDev(filepath.Join(root, "dev"), spec.Terminal) }},
		{"pivot_root", func() error { return pivotRoot(root) }},
		{"read-only root", func() error {
			return unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "")
		}},
	}
	for _, mount := range mounts {
		if err := mount.do(); err != nil {
			return mount.what, err
		}
	}
	if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
		return "hostname", err
	}
	if err := loopbackUp(); err != nil {
		return "loopback", err
	}
	if err := dropPrivileges(); err != nil {
		return "dropping privileges", err
	}
	if err := os.Chdir("/home"); err != nil {
		return "working directory", err
	}
	path, err := lookPath(spec.Argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: command not found\n", spec.Argv[0])
		os.Exit(127)
	}
	// Nothing this process inherited beyond its standard streams reaches the command: every other
	// descriptor closes at execve. (Closing them now would close the Go runtime's own epoll
	// descriptor under it.)
	if err := closeOnExec(); err != nil {
		return "closing inherited files", err
	}
	if err := installSandboxFilter(); err != nil {
		return "system call filter", err
	}
	err = unix.Exec(path, spec.Argv, spec.Env)
	fmt.Fprintf(os.Stderr, "%s: %v\n", spec.Argv[0], err)
	os.Exit(126)
	return "", nil
}

func mountProc(target string) error {
	if err := unix.Mount("proc", target, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return err
	}
	for _, name := range maskedProcFiles {
		path := filepath.Join(target, name)
		if info, err := os.Stat(path); err == nil && !info.IsDir() {
			if err := unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err != nil {
				return err
			}
		}
	}
	for _, name := range maskedProcDirs {
		path := filepath.Join(target, name)
		if info, err := os.Stat(path); err == nil && info.IsDir() {
			if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k"); err != nil {
				return err
			}
		}
	}
	for _, name := range readOnlyProcDirs {
		path := filepath.Join(target, name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		if err := unix.Mount("", path, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return err
		}
	}
	return nil
}

func mountDev(target, terminal string) error {
	if err := unix.Mount("tmpfs", target, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
		return err
	}
	bind := func(source, name string) error {
		path := filepath.Join(target, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			return err
		}
		file.Close()
		return unix.Mount(source, path, "", unix.MS_BIND, "")
	}
	for _, device := range devices {
		if err := bind("/dev/"+device, device); err != nil {
			return err
		}
	}
	if strings.HasPrefix(terminal, "/dev/pts/") {
		if err := bind(terminal, strings.TrimPrefix(terminal, "/dev/")); err != nil {
			return err
		}
	}
	for link, to := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(to, filepath.Join(target, link)); err != nil {
			return err
		}
	}
	return unix.Mount("", target, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, "size=64k,mode=0755")
}

// pivotRoot makes root the root of this mount namespace and detaches the host's: unlike chroot,
// no path leads back out.
func pivotRoot(root string) error {
	if err := os.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", ".oldroot"); err != nil {
		return err
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	return unix.Unmount("/.oldroot", unix.MNT_DETACH)
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	request, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	request.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, request)
}

// dropPrivileges leaves the command with no capabilities, none to gain (no_new_privs, an empty
// bounding set), as nobody, with no core dumps and a bounded number of open files.
func dropPrivileges() error {
	last := 40
	if text, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if parsed, err := strconv.Atoi(strings.TrimSpace(string(text))); err == nil {
			last = parsed
		}
	}
	for capability := 0; capability <= last; capability++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(capability), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	for resource, limit := range map[int]uint64{unix.RLIMIT_CORE: 0, unix.RLIMIT_NOFILE: 1024} {
		if err := unix.Setrlimit(resource, &unix.Rlimit{Cur: limit, Max: limit}); err != nil {
			return err
		}
	}
	if err := syscall.Setgroups([]int{}); err != nil {
		return err
	}
	if err := syscall.Setgid(nobody); err != nil {
		return err
	}
	if err := syscall.Setuid(nobody); err != nil {
		return err
	}
	// Changing credentials cleared the parent-death signal: the sandbox still dies with its server.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return err
	}
	unix.Umask(0o022)
	return nil
}

// lookPath finds a command in the sandbox's PATH (/bin, /usr/bin), or takes a path as given.
func lookPath(command string) (string, error) {
	if strings.Contains(command, "/") {
		return command, nil
	}
	for _, dir := range []string{"/bin", "/usr/bin"} {
		path := filepath.Join(dir, command)
		if info, err := os.Stat(path); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return path, nil
		}
	}
	return "", os.ErrNotExist
}

// closeOnExec marks every descriptor above the standard streams close-on-exec.
func closeOnExec() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	// Kernels before 5.11: one by one.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, entry := range entries {
		fd, err := strconv.Atoi(entry.Name())
		if err != nil || fd < 3 {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return err
		}
	}
	return nil
}
