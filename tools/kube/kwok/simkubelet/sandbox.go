package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// sandboxInitArg makes this binary the first process of a new sandbox (see sandbox_init.go).
const sandboxInitArg = "sandbox-init"

// The sandbox's user: nobody, as on Debian.
const nobody = 65534

type sandboxLimits struct {
	memoryBytes int64
	cpuMillis   int64
	pids        int64
	tmpfsBytes  int64
	maxDuration time.Duration
	maxSessions int
	// Sessions at once per tenant (the super namespace's prefix), so one cannot take every slot.
	maxPerTenant int
	// What every session together may use (the parent cgroup's limits).
	totalMemoryBytes int64
	totalPids        int64
	cgroupParent     string
}

// sandboxSpec is what the sandbox's first process needs to set itself up; it arrives on fd 3
// once the process sits in its cgroups, so nothing of the tenant's runs outside them.
type sandboxSpec struct {
	Rootfs     string   `json:"rootfs"`
	Hostname   string   `json:"hostname"`
	Argv       []string `json:"argv"`
	Env        []string `json:"env"`
	TmpfsBytes int64    `json:"tmpfsBytes"`
	// The host path of the terminal the command gets (/dev/pts/N), bound into the sandbox so that
	// ttyname(3) finds it; empty without a terminal.
	Terminal string `json:"terminal,omitempty"`
}

// sandboxes runs exec sessions, each in a sandbox of its own, at most limits.maxSessions at once.
type sandboxes struct {
	rootfs  string
	limits  sandboxLimits
	cgroups cgroupDriver
	slots   chan struct{}

	mu        sync.Mutex
	live      map[*exec.Cmd]struct{}
	perTenant map[string]int
}

func newSandboxes(rootfs string, limits sandboxLimits) (*sandboxes, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("sandboxed exec needs root (namespaces, cgroups, mounts): run Ring0 as root, or exec on simulated nodes stays unavailable")
	}
	cgroups, err := detectCgroups(limits.cgroupParent)
	if err != nil {
		return nil, err
	}
	// Sessions of a server that died (SIGKILL, crash) are ended now: their slots, limits and wall
	// time were that server's to keep.
	if ended := cgroups.endLeftovers(); ended > 0 {
		log.Printf("ended %d sessions left by an earlier server", ended)
	}
	if err := cgroups.limitAll(limits); err != nil {
		return nil, fmt.Errorf("limiting all sessions together: %w", err)
	}
	if limits.maxSessions < 1 {
		limits.maxSessions = 1
	}
	return &sandboxes{
		rootfs:    rootfs,
		limits:    limits,
		cgroups:   cgroups,
		slots:     make(chan struct{}, limits.maxSessions),
		live:      map[*exec.Cmd]struct{}{},
		perTenant: map[string]int{},
	}, nil
}

// hostnameOf is the pod's name as a hostname (at most 63 characters, as the kernel allows 64).
func hostnameOf(name string) string {
	pod := name
	if _, after, found := strings.Cut(name, "/"); found {
		pod = after
	}
	if len(pod) > 63 {
		pod = pod[:63]
	}
	return strings.TrimRight(pod, ".-")
}

// tenantOf is the tenant part of a super namespace (its prefix, up to the first "-"), which is what
// a tenant's sessions are counted by.
func tenantOf(name string) string {
	namespace, _, _ := strings.Cut(name, "/")
	prefix, _, _ := strings.Cut(namespace, "-")
	return prefix
}

// admit counts a session of `tenant` in, or says which cap it would break.
func (s *sandboxes) admit(tenant string) (func(), error) {
	select {
	case s.slots <- struct{}{}:
	default:
		return nil, fmt.Errorf("this node already runs %d exec sessions; try again later", s.limits.maxSessions)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limits.maxPerTenant > 0 && s.perTenant[tenant] >= s.limits.maxPerTenant {
		<-s.slots
		return nil, fmt.Errorf("this tenant already runs %d exec sessions on this node; end one and try again", s.limits.maxPerTenant)
	}
	s.perTenant[tenant]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.perTenant[tenant]--; s.perTenant[tenant] <= 0 {
			delete(s.perTenant, tenant)
		}
		<-s.slots
	}, nil
}

func randomID() string {
	bytes := make([]byte, 8)
	_, _ = rand.Read(bytes)
	return hex.EncodeToString(bytes)
}

// ExecInContainer runs cmd in a fresh sandbox: remotecommand.Executor, for kubectl exec.
func (s *sandboxes) ExecInContainer(ctx context.Context, name, uid, container string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, timeout time.Duration) error {
	release, err := s.admit(tenantOf(name))
	if err != nil {
		return err
	}
	defer release()
	duration := s.limits.maxDuration
	if timeout > 0 && timeout < duration {
		duration = timeout
	}
	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()

	id := randomID()
	group, err := s.cgroups.create(id, s.limits)
	if err != nil {
		return fmt.Errorf("preparing the sandbox: %w", err)
	}
	defer group.remove()

	env := []string{"PATH=/bin:/usr/bin", "HOME=/home", "HOSTNAME=" + hostnameOf(name), "USER=nobody"}
	if tty {
		env = append(env, "TERM=xterm-256color")
	}
	spec := sandboxSpec{Rootfs: s.rootfs, Hostname: hostnameOf(name), Argv: cmd, Env: env, TmpfsBytes: s.limits.tmpfsBytes}

	specRead, specWrite, err := os.Pipe()
	if err != nil {
		return err
	}
	defer specRead.Close()
	defer specWrite.Close()

	init := exec.Command("/proc/self/exe", sandboxInitArg)
	init.Args[0] = "ring0-sandbox"
	init.Env = []string{}
	init.ExtraFiles = []*os.File{specRead}
	// Without a terminal, stdin is copied by a goroutine Wait would otherwise wait for as long as
	// the client keeps it open, past the session's end.
	init.WaitDelay = 2 * time.Second
	init.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		// If this server dies, so does the sandbox: its first process takes every other with it.
		Pdeathsig: syscall.SIGKILL,
	}

	var terminal *os.File
	if tty {
		master, slave, err := pty.Open()
		if err != nil {
			return fmt.Errorf("opening a terminal: %w", err)
		}
		defer master.Close()
		spec.Terminal = slave.Name()
		init.Stdin, init.Stdout, init.Stderr = slave, slave, slave
		init.SysProcAttr.Setsid = true
		init.SysProcAttr.Setctty = true
		terminal = master
		defer slave.Close()
	} else {
		if in != nil {
			init.Stdin = in
		}
		if out != nil {
			init.Stdout = out
		}
		if errOut != nil {
			init.Stderr = errOut
		}
	}

	if err := init.Start(); err != nil {
		return fmt.Errorf("starting the sandbox: %w", err)
	}
	s.track(init, true)
	defer s.track(init, false)
	if err := group.add(init.Process.Pid); err != nil {
		_ = init.Process.Kill()
		_ = init.Wait()
		return fmt.Errorf("placing the sandbox in its cgroups: %w", err)
	}
	if err := json.NewEncoder(specWrite).Encode(spec); err != nil {
		_ = init.Process.Kill()
		_ = init.Wait()
		return fmt.Errorf("starting the sandbox: %w", err)
	}
	specWrite.Close()
	specRead.Close()

	copied := make(chan struct{})
	if terminal != nil {
		if slave, ok := init.Stdin.(*os.File); ok {
			slave.Close()
		}
		go func() {
			for size := range resize {
				_ = pty.Setsize(terminal, &pty.Winsize{Rows: size.Height, Cols: size.Width})
			}
		}()
		if in != nil {
			go func() { _, _ = io.Copy(terminal, in) }()
		}
		go func() {
			defer close(copied)
			if out != nil {
				_, _ = io.Copy(out, terminal)
			}
		}()
	} else {
		close(copied)
	}

	waited := make(chan error, 1)
	go func() { waited <- init.Wait() }()
	var waitErr error
	timedOut := false
	select {
	case waitErr = <-waited:
	case <-ctx.Done():
		// Killing the first process ends the PID namespace: the kernel kills every process in it.
		_ = init.Process.Kill()
		waitErr = <-waited
		timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	}
	if terminal != nil {
		// Every process of the sandbox is gone, so the terminal's reader ends (EIO) soon.
		select {
		case <-copied:
		case <-time.After(2 * time.Second):
		}
	}
	// Everything the command wrote has been copied: the output streams end now, in order after their
	// data, before the exit status goes out on its own stream (a client that reads the status first
	// and then sees the connection close would otherwise lose output still in flight).
	defer func() {
		for _, stream := range []io.WriteCloser{out, errOut} {
			if stream != nil {
				_ = stream.Close()
			}
		}
	}()
	if timedOut {
		message := fmt.Sprintf("\r\nring0: this exec session reached its maximum duration (%s) and was ended\r\n", duration)
		if out != nil {
			_, _ = io.WriteString(out, message)
		}
		return utilexec.CodeExitError{Err: errors.New(strings.TrimSpace(message)), Code: 137}
	}
	if waitErr != nil {
		var exitErr *exec.ExitError
		if errors.As(waitErr, &exitErr) {
			code := exitErr.ExitCode()
			if code < 0 {
				code = 128 + int(exitErr.Sys().(syscall.WaitStatus).Signal())
			}
			return utilexec.CodeExitError{Err: waitErr, Code: code}
		}
		return waitErr
	}
	return nil
}

func (s *sandboxes) track(cmd *exec.Cmd, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if open {
		s.live[cmd] = struct{}{}
	} else {
		delete(s.live, cmd)
	}
}

// closeAll ends every sandbox (on shutdown).
func (s *sandboxes) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cmd := range s.live {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
	if len(s.live) > 0 {
		log.Printf("ended %d exec sessions", len(s.live))
	}
}

// sessions is how many exec sessions run now.
func (s *sandboxes) sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}
