// Command ring0-simkubelet serves the kubelet API of the local super cluster's simulated (kwok)
// nodes, in place of kwok's own server, so that nothing a tenant runs on a simulated node ever runs
// as a plain process on Ring0's host.
//
//   - exec runs the command in a sandbox (sandbox.go, sandbox_init.go): its own network (loopback
//     only), PID, mount, IPC and UTS namespaces, a read-only minimal root built from busybox, no
//     capabilities as user nobody, cgroup limits on memory, CPU and pids, and a wall-time cap;
//   - containerLogs serves the simulated log file Ring0 keeps per pod (<logs-dir>/<namespace>/<pod>.log);
//   - attach and portForward are refused: a simulated pod has no process to attach to or port to reach.
//
// Every caller presents a client certificate from --client-ca-file whose organisation is one of
// --authorized-groups (the super cluster's API server and Ring0's vn-agents); nothing is served
// without one.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	// The sandbox's first process is this binary again (see sandbox.go): it sets the sandbox up
	// from inside its new namespaces, then becomes the tenant's command.
	if len(os.Args) > 1 && os.Args[1] == sandboxInitArg {
		sandboxInit()
		return
	}
	if err := run(); err != nil {
		log.Printf("ring0-simkubelet: %v", err)
		os.Exit(1)
	}
}

type options struct {
	listen           string
	certFile         string
	keyFile          string
	clientCAFile     string
	authorizedGroups string
	logsDir          string
	rootfs           string
	busybox          string
	limits           sandboxLimits
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("ring0-simkubelet", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "host:port to serve the kubelet API on (HTTPS)")
	fs.StringVar(&o.certFile, "tls-cert-file", "", "serving certificate (PEM)")
	fs.StringVar(&o.keyFile, "tls-private-key-file", "", "serving key (PEM)")
	fs.StringVar(&o.clientCAFile, "client-ca-file", "", "CA that callers' client certificates must chain to")
	fs.StringVar(&o.authorizedGroups, "authorized-groups", "system:masters", "comma-separated organisations (groups) a caller's certificate must name one of")
	fs.StringVar(&o.logsDir, "logs-dir", "", "directory of simulated pod logs: <namespace>/<pod>.log in CRI format")
	fs.StringVar(&o.rootfs, "rootfs", "", "directory to build the sandboxes' read-only root in")
	fs.StringVar(&o.busybox, "busybox", "/bin/busybox", "a statically linked busybox: the only program in the sandboxes' root")
	fs.Int64Var(&o.limits.memoryBytes, "memory-limit-bytes", 256<<20, "memory limit of one exec session")
	fs.Int64Var(&o.limits.cpuMillis, "cpu-limit-millicores", 500, "CPU limit of one exec session")
	fs.Int64Var(&o.limits.pids, "pids-limit", 128, "process limit of one exec session")
	fs.Int64Var(&o.limits.tmpfsBytes, "tmpfs-bytes", 32<<20, "size of each writable tmpfs (/tmp, /home) of a session")
	fs.DurationVar(&o.limits.maxDuration, "max-duration", time.Hour, "wall-time cap of one exec session")
	fs.IntVar(&o.limits.maxSessions, "max-sessions", 128, "exec sessions at once; more are refused")
	fs.IntVar(&o.limits.maxPerTenant, "max-sessions-per-tenant", 64, "exec sessions at once per tenant (super namespace prefix)")
	fs.Int64Var(&o.limits.totalMemoryBytes, "total-memory-limit-bytes", 4<<30, "memory limit of all exec sessions together")
	fs.Int64Var(&o.limits.totalPids, "total-pids-limit", 4096, "process limit of all exec sessions together")
	fs.StringVar(&o.limits.cgroupParent, "cgroup-parent", "ring0-sandbox", "cgroup (under each controller) that sessions' cgroups are made in")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for name, value := range map[string]string{
		"--tls-cert-file": o.certFile, "--tls-private-key-file": o.keyFile,
		"--client-ca-file": o.clientCAFile, "--logs-dir": o.logsDir, "--rootfs": o.rootfs,
	} {
		if value == "" {
			return o, fmt.Errorf("%s is required", name)
		}
	}
	return o, nil
}

func run() error {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		return err
	}
	// Without a sandbox there is no exec (refused with the reason); logs are still served.
	var sandboxes *sandboxes
	unavailable := ""
	if err := buildRootfs(o.rootfs, o.busybox); err != nil {
		unavailable = fmt.Sprintf("building the sandbox root: %v", err)
	} else if sandboxes, err = newSandboxes(o.rootfs, o.limits); err != nil {
		unavailable = err.Error()
	}
	if unavailable != "" {
		log.Printf("exec on simulated nodes is unavailable: %s", unavailable)
	}
	tlsConfig, err := serverTLS(o)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	server := &http.Server{
		Handler:           newHandler(sandboxes, unavailable, o.logsDir, splitList(o.authorizedGroups)),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		// Upgraded exec streams are long-lived: no write timeout. HTTP/2 is off (TLSNextProto is
		// empty), since SPDY and WebSocket upgrades need HTTP/1.1.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ErrorLog:     log.New(os.Stderr, "ring0-simkubelet: http: ", 0),
	}
	// The port goes to stdout so whoever started us learns it (with --listen 127.0.0.1:0).
	fmt.Printf("listening on %s\n", listener.Addr().String())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		if sandboxes != nil {
			sandboxes.closeAll()
		}
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.ServeTLS(listener, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func serverTLS(o options) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the serving certificate: %w", err)
	}
	caPEM, err := os.ReadFile(o.clientCAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no PEM certificate", o.clientCAFile)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	}, nil
}

func splitList(text string) []string {
	var out []string
	for _, part := range strings.Split(text, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
