package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// httpdHandler answers what a test of pod networking and of tenant webhooks needs: `/` names the
// pod (its hostname) and the request, `/healthz` is for probes, `/convert` is a CRD conversion
// webhook, `/admit` a validating admission webhook, and `/requests` counts what the others served
// (so a test can tell that nothing reached the pod).
func httpdHandler(hostname string) http.Handler {
	var served atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/requests", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, served.Load())
	})
	mux.HandleFunc("/convert", func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		reviewHandler(w, r, func(review map[string]any) map[string]any { return convertReview(review, hostname) })
	})
	mux.HandleFunc("/admit", func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		reviewHandler(w, r, func(review map[string]any) map[string]any { return admitReview(review, hostname) })
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "hello from %s\n%s %s\n", hostname, r.Method, r.URL.RequestURI())
	})
	return mux
}

// reviewHandler reads a ConversionReview or AdmissionReview (at most 4 MiB) and writes the answer.
func reviewHandler(w http.ResponseWriter, r *http.Request, answer func(map[string]any) map[string]any) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a review", http.StatusMethodNotAllowed)
		return
	}
	var review map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&review); err != nil {
		http.Error(w, "not a review: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer(review))
}

// convertReview converts every object to the desired version, marking it with `spec.convertedBy`.
func convertReview(review map[string]any, hostname string) map[string]any {
	request, _ := review["request"].(map[string]any)
	desired, _ := request["desiredAPIVersion"].(string)
	objects, _ := request["objects"].([]any)
	converted := make([]any, 0, len(objects))
	for _, item := range objects {
		object, _ := item.(map[string]any)
		if object == nil {
			continue
		}
		object["apiVersion"] = desired
		spec, _ := object["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
		}
		spec["convertedBy"] = hostname
		object["spec"] = spec
		converted = append(converted, object)
	}
	return map[string]any{
		"apiVersion": review["apiVersion"],
		"kind":       "ConversionReview",
		"response": map[string]any{
			"uid":              request["uid"],
			"convertedObjects": converted,
			"result":           map[string]any{"status": "Success"},
		},
	}
}

// admitReview refuses objects labelled `deny: "true"` (naming this pod), and admits the rest.
func admitReview(review map[string]any, hostname string) map[string]any {
	request, _ := review["request"].(map[string]any)
	object, _ := request["object"].(map[string]any)
	metadata, _ := object["metadata"].(map[string]any)
	labels, _ := metadata["labels"].(map[string]any)
	response := map[string]any{"uid": request["uid"], "allowed": true}
	if labels["deny"] == "true" {
		response["allowed"] = false
		response["status"] = map[string]any{"code": 403, "message": "denied by the webhook in pod " + hostname}
	}
	return map[string]any{"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": response}
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
	server := &http.Server{Handler: httpdHandler(hostname), ReadHeaderTimeout: 10 * time.Second}
	// With TLS_CERT and TLS_KEY (PEM) in the environment it serves HTTPS, as webhooks must.
	certPEM, keyPEM := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")
	if certPEM != "" || keyPEM != "" {
		pair, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
		if err != nil {
			fmt.Fprintln(os.Stderr, "httpd: TLS_CERT/TLS_KEY:", err)
			return 1
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
		fmt.Printf("httpd: serving HTTPS on %s\n", ln.Addr())
	} else {
		fmt.Printf("httpd: serving on %s\n", ln.Addr())
	}
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
