package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// The test binary is also the sandbox's first process, as the real binary is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandboxInitArg {
		sandboxInit()
		return
	}
	os.Exit(m.Run())
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// testSandboxes needs what the real thing needs: root, cgroups and Debian's busybox-static.
func testSandboxes(t *testing.T, limits sandboxLimits) *sandboxes {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("sandboxes need root")
	}
	busybox := os.Getenv("RING0_BUSYBOX")
	if busybox == "" {
		busybox = "/bin/busybox"
	}
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	if err := buildRootfs(rootfs, busybox); err != nil {
		t.Fatal(err)
	}
	if limits.memoryBytes == 0 {
		limits = sandboxLimits{memoryBytes: 64 << 20, cpuMillis: 500, pids: 32, tmpfsBytes: 4 << 20, maxDuration: time.Minute, maxSessions: 4}
	}
	limits.cgroupParent = "ring0-sandbox-test"
	s, err := newSandboxes(rootfs, limits)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runScript executes a shell script in a fresh sandbox and returns its output and exit code.
func runScript(t *testing.T, s *sandboxes, script string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	err := s.ExecInContainer(context.Background(), "ns/pod-name", "", "main", []string{"sh", "-c", script},
		nil, nopCloser{&out}, nopCloser{&out}, false, nil, 0)
	t.Logf("$ %s\n%s", script, out.String())
	code := 0
	var exitErr utilexec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitStatus()
	} else if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return out.String(), code
}

func TestSandboxRunsCommandsAsNobodyWithTheirExitCode(t *testing.T) {
	s := testSandboxes(t, sandboxLimits{})
	out, code := runScript(t, s, "echo ring0-$((6*7)); id -u; id -g; hostname")
	if code != 0 || out != "ring0-42\n65534\n65534\npod-name\n" {
		t.Fatalf("got %q (exit %d)", out, code)
	}
	if _, code := runScript(t, s, "exit 3"); code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
	if out, code := runScript(t, s, "no-such-command"); code != 127 {
		t.Fatalf("exit code %d (%q), want 127", code, out)
	}
}

func TestSandboxSeesNoHostFilesAndWritesNowhereOutsideTmpfs(t *testing.T) {
	s := testSandboxes(t, sandboxLimits{})
	secret := filepath.Join(t.TempDir(), "ring0-secret")
	if err := os.WriteFile(secret, []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := runScript(t, s, "ls /; cat "+secret+" 2>&1; ls /etc/shadow 2>&1; touch /bin/x 2>&1; touch /x 2>&1; echo ok > /tmp/x && cat /tmp/x")
	for _, want := range []string{"No such file", "Read-only file system", "ok"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q in %q", want, out)
		}
	}
	if strings.Contains(out, "host secret") {
		t.Fatalf("the sandbox read a host file: %q", out)
	}
	for _, entry := range strings.Fields(strings.Split(out, "\n")[0]) {
		if entry == "work" || entry == "root" || entry == "var" {
			t.Fatalf("unexpected %q in the sandbox's root: %q", entry, out)
		}
	}
}

func TestSandboxHasOnlyLoopbackAndItsOwnProcesses(t *testing.T) {
	s := testSandboxes(t, sandboxLimits{})
	// Something listens on the host's loopback: the sandbox must not reach it.
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			_, _ = conn.Write([]byte("host service\n"))
			conn.Close()
		}
	}()
	port := listener.Addr().(*net.TCPAddr).Port
	out, _ := runScript(t, s, "cat /proc/net/dev | tail -n +3 | cut -d: -f1; echo | nc -w 2 127.0.0.1 "+strconv.Itoa(port)+" 2>&1; echo nc=$?; ls /proc | grep -c '^[0-9]'")
	lines := strings.Fields(out)
	if len(lines) == 0 || lines[0] != "lo" || strings.Contains(out, "eth") {
		t.Fatalf("interfaces other than lo: %q", out)
	}
	if strings.Contains(out, "host service") || !strings.Contains(out, "nc=1") {
		t.Fatalf("the sandbox reached the host's loopback: %q", out)
	}
	if procs := lines[len(lines)-1]; procs != "1" && procs != "2" && procs != "3" && procs != "4" {
		t.Fatalf("the sandbox sees %s processes", procs)
	}
}

func TestSandboxHasNoCapabilities(t *testing.T) {
	s := testSandboxes(t, sandboxLimits{})
	out, _ := runScript(t, s, "grep -E '^Cap(Eff|Prm|Bnd)|NoNewPrivs' /proc/self/status")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 2 {
			t.Fatalf("unexpected line %q", line)
		}
		if strings.HasPrefix(fields[0], "Cap") && strings.Trim(fields[1], "0") != "" {
			t.Fatalf("capabilities left: %q", out)
		}
		if fields[0] == "NoNewPrivs:" && fields[1] != "1" {
			t.Fatalf("no_new_privs not set: %q", out)
		}
	}
}

func TestSandboxLimitsMemoryAndWallTime(t *testing.T) {
	s := testSandboxes(t, sandboxLimits{memoryBytes: 32 << 20, cpuMillis: 500, pids: 32, tmpfsBytes: 128 << 20, maxDuration: 2 * time.Second, maxSessions: 2})
	// Filling a tmpfs past the memory limit is charged to the session: the kernel ends it.
	out, code := runScript(t, s, "dd if=/dev/zero of=/tmp/fill bs=1M count=100 2>&1; echo survived")
	if code == 0 && strings.Contains(out, "100+0 records") {
		t.Fatalf("wrote 100 MiB under a 32 MiB limit: %q (exit %d)", out, code)
	}
	started := time.Now()
	_, code = runScript(t, s, "sleep 30")
	if code != 137 || time.Since(started) > 20*time.Second {
		t.Fatalf("a command past the wall-time cap: exit %d after %s", code, time.Since(started))
	}
}

func TestSandboxRefusesSessionsBeyondItsCap(t *testing.T) {
	s := testSandboxes(t, sandboxLimits{memoryBytes: 32 << 20, cpuMillis: 500, pids: 32, tmpfsBytes: 1 << 20, maxDuration: time.Minute, maxSessions: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.ExecInContainer(ctx, "ns/a", "", "main", []string{"sleep", "60"}, nil, nil, nil, false, nil, 0)
	}()
	time.Sleep(500 * time.Millisecond)
	err := s.ExecInContainer(context.Background(), "ns/b", "", "main", []string{"true"}, nil, nil, nil, false, nil, 0)
	if err == nil || !strings.Contains(err.Error(), "already runs 1 exec sessions") {
		t.Fatalf("second session: %v", err)
	}
	cancel()
	<-done
}

func TestSandboxTerminal(t *testing.T) {
	s := testSandboxes(t, sandboxLimits{})
	input, feed := io.Pipe()
	var out bytes.Buffer
	resize := make(chan remotecommand.TerminalSize, 1)
	resize <- remotecommand.TerminalSize{Width: 120, Height: 40}
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = io.WriteString(feed, "stty size; tty; exit 5\n")
	}()
	err := s.ExecInContainer(context.Background(), "ns/web", "", "main", []string{"sh"}, input, nopCloser{&out}, nil, true, resize, 0)
	close(resize)
	var exitErr utilexec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 5 {
		t.Fatalf("exit: %v (%q)", err, out.String())
	}
	if !strings.Contains(out.String(), "40 120") || !strings.Contains(out.String(), "/dev/pts/") {
		t.Fatalf("terminal output %q", out.String())
	}
}

func TestSandboxFiltersSystemCallsAndRunsNothingFromItsTmpfs(t *testing.T) {
	s := testSandboxes(t, sandboxLimits{})
	// A file descriptor this process leaves open without close-on-exec must not reach the command.
	leaked, err := unix.Dup(1)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(leaked)
	out, _ := runScript(t, s, strings.Join([]string{
		"grep Seccomp: /proc/self/status",
		"unshare -U -r true 2>&1; echo unshare=$?",
		"cp /bin/busybox /tmp/b && /tmp/b true 2>&1; echo tmpexec=$?",
		"ls /proc/self/fd | wc -l",
	}, "; "))
	if !strings.Contains(out, "Seccomp:\t2") {
		t.Fatalf("no seccomp filter: %q", out)
	}
	if !strings.Contains(out, "Operation not permitted") || strings.Contains(out, "unshare=0") {
		t.Fatalf("a user namespace was made: %q", out)
	}
	if strings.Contains(out, "tmpexec=0") {
		t.Fatalf("a program ran from /tmp: %q", out)
	}
	lines := strings.Fields(out)
	if fds := lines[len(lines)-1]; fds != "4" {
		t.Fatalf("%s descriptors open in the command (want its 0, 1, 2 and the one ls reads): %q", fds, out)
	}
}
