package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crilogs "k8s.io/cri-client/pkg/logs"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// A namespace or pod name as the API server validates it (DNS subdomain): never a path element
// that could leave the logs directory.
var objectName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

// kubeletRequest is a parsed kubelet API path: /<verb>/<namespace>/<pod>[/<uid>]/<container>.
type kubeletRequest struct {
	verb      string
	namespace string
	pod       string
	container string
}

// parseKubeletPath reads the paths a kube-apiserver sends for logs, exec, attach and port-forward.
func parseKubeletPath(path string) (kubeletRequest, bool) {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) < 3 {
		return kubeletRequest{}, false
	}
	request := kubeletRequest{verb: parts[0], namespace: parts[1], pod: parts[2]}
	switch {
	case request.verb == "portForward" && (len(parts) == 3 || len(parts) == 4):
	case request.verb == "containerLogs" && len(parts) == 4:
		request.container = parts[3]
	case (request.verb == "exec" || request.verb == "attach") && (len(parts) == 4 || len(parts) == 5):
		request.container = parts[len(parts)-1]
	default:
		return kubeletRequest{}, false
	}
	if !objectName.MatchString(request.namespace) || !objectName.MatchString(request.pod) {
		return kubeletRequest{}, false
	}
	return request, true
}

// authorized says whether a verified client certificate's organisations name an authorized group.
func authorized(organizations []string, groups []string) bool {
	return slices.ContainsFunc(organizations, func(organization string) bool {
		return slices.Contains(groups, organization)
	})
}

type handler struct {
	sandboxes *sandboxes
	// Why exec is refused when there are no sandboxes.
	unavailable string
	logsDir     string
	groups      []string
}

func newHandler(sandboxes *sandboxes, unavailable, logsDir string, groups []string) http.Handler {
	return &handler{sandboxes: sandboxes, unavailable: unavailable, logsDir: logsDir, groups: groups}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		http.Error(w, "a verified client certificate is required", http.StatusUnauthorized)
		return
	}
	subject := r.TLS.VerifiedChains[0][0].Subject
	if !authorized(subject.Organization, h.groups) {
		log.Printf("refused %q (%v) for %s %s", subject.CommonName, subject.Organization, r.Method, r.URL.Path)
		http.Error(w, fmt.Sprintf("%q may not use this node's kubelet API", subject.CommonName), http.StatusForbidden)
		return
	}
	if r.URL.Path == "/healthz" {
		_, _ = io.WriteString(w, "ok")
		return
	}
	request, ok := parseKubeletPath(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch request.verb {
	case "containerLogs":
		h.serveLogs(w, r, request)
	case "exec":
		h.serveExec(w, r, request)
	default:
		http.Error(w, fmt.Sprintf("%s is not supported on a simulated node: its pods run no processes; use a real node", request.verb), http.StatusNotImplemented)
	}
}

func (h *handler) serveExec(w http.ResponseWriter, r *http.Request, request kubeletRequest) {
	if h.sandboxes == nil {
		// Never a plain process instead: without its sandbox, exec is refused.
		http.Error(w, "exec on simulated nodes is unavailable on this host: "+h.unavailable, http.StatusServiceUnavailable)
		return
	}
	streamOptions, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	command := r.URL.Query()["command"]
	if len(command) == 0 || command[0] == "" {
		http.Error(w, "no command given", http.StatusBadRequest)
		return
	}
	log.Printf("exec in %s/%s (%s): %d args, tty=%v", request.namespace, request.pod, request.container, len(command), streamOptions.TTY)
	// A hijacked connection's request context is never cancelled: the session ends with its
	// connection instead, seen when reading from it fails.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	remotecommand.ServeExec(&endOnClose{ResponseWriter: w, cancel: cancel}, r.WithContext(ctx), h.sandboxes,
		request.namespace+"/"+request.pod, "", request.container, command,
		streamOptions, time.Hour, 30*time.Second, remotecommand.SupportedStreamingProtocols)
}

// endOnClose hands the stream server a connection that cancels the session when it closes.
type endOnClose struct {
	http.ResponseWriter
	cancel context.CancelFunc
}

func (e *endOnClose) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hijacker, ok := e.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the connection cannot be taken over")
	}
	conn, buffered, err := hijacker.Hijack()
	if err != nil {
		return nil, nil, err
	}
	watched := &closeWatcher{Conn: conn, cancel: e.cancel}
	// Reads already buffered stay in front of the watched connection.
	return watched, bufio.NewReadWriter(bufio.NewReader(io.MultiReader(buffered.Reader, watched)), bufio.NewWriter(watched)), nil
}

type closeWatcher struct {
	net.Conn
	cancel context.CancelFunc
}

func (c *closeWatcher) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.cancel()
	}
	return n, err
}

func (c *closeWatcher) Close() error {
	c.cancel()
	return c.Conn.Close()
}

func (h *handler) serveLogs(w http.ResponseWriter, r *http.Request, request kubeletRequest) {
	query := r.URL.Query()
	file := filepath.Join(h.logsDir, request.namespace, request.pod+".log")
	if query.Get("previous") == "true" {
		http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", request.container, request.pod), http.StatusBadRequest)
		return
	}
	if _, err := os.Stat(file); err != nil {
		http.Error(w, fmt.Sprintf("no logs for pod %s/%s on this simulated node yet", request.namespace, request.pod), http.StatusNotFound)
		return
	}
	opts, err := logOptions(query, time.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	flusher, _ := w.(http.Flusher)
	out := &flushWriter{w: w, flusher: flusher}
	w.Header().Set("Content-Type", "text/plain")
	if err := crilogs.ReadLogs(r.Context(), file, "", opts, runningContainer{}, out, out); err != nil &&
		!errors.Is(r.Context().Err(), context.Canceled) {
		log.Printf("logs of %s/%s: %v", request.namespace, request.pod, err)
	}
}

// flushWriter sends each write at once, so followed logs arrive line by line.
type flushWriter struct {
	w       io.Writer
	flusher http.Flusher
}

func (f *flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if f.flusher != nil {
		f.flusher.Flush()
	}
	return n, err
}

// runningContainer answers the log reader's "is the container still running?" with "unavailable",
// which it reads as running: a simulated pod's log is followed until the caller goes away.
type runningContainer struct {
	criapi.RuntimeService
}

func (runningContainer) ContainerStatus(context.Context, string, bool) (*runtimeapi.ContainerStatusResponse, error) {
	return nil, status.Error(codes.Unavailable, "simulated")
}
