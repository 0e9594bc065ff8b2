package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// httpdHandler answers what a test of pod networking needs: `/` names the pod (its hostname) and
// the request, `/healthz` is for probes.
func httpdHandler(hostname string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "hello from %s\n%s %s\n", hostname, r.Method, r.URL.RequestURI())
	})
	return mux
}

// httpdRun is the HTTP server image's process: it serves httpdHandler on `listen` (default
// :8080, or $PORT) until SIGTERM or SIGINT, then shuts down gracefully and exits 0.
func httpdRun(args []string) int {
	listen := ":8080"
	if port := os.Getenv("PORT"); port != "" {
		listen = ":" + port
	}
	if len(args) >= 2 && args[0] == "--listen" {
		listen = args[1]
	}
	hostname, _ := os.Hostname()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpd:", err)
		return 1
	}
	fmt.Printf("httpd: serving on %s\n", ln.Addr())
	server := &http.Server{Handler: httpdHandler(hostname), ReadHeaderTimeout: 10 * time.Second}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	served := make(chan error, 1)
	go func() { served <- server.Serve(ln) }()
	select {
	case err := <-served:
		fmt.Fprintln(os.Stderr, "httpd:", err)
		return 1
	case <-stop:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := server.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "httpd:", err)
		return 1
	}
	return 0
}
