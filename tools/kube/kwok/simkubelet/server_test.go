package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

type testPKI struct {
	caPEM   []byte
	ca      *x509.Certificate
	caKey   *ecdsa.PrivateKey
	server  tls.Certificate
	clients map[string]tls.Certificate
}

func issue(t *testing.T, template *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = template, key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// newTestPKI makes a client CA, a serving certificate and client certificates by organisation.
func newTestPKI(t *testing.T, organizations ...string) testPKI {
	t.Helper()
	now := time.Now()
	ca, caKey, caPEM, _ := issue(t, &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	pki := testPKI{caPEM: caPEM, ca: ca, caKey: caKey, clients: map[string]tls.Certificate{}}
	_, _, certPEM, keyPEM := issue(t, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "sim"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}, ca, caKey)
	pki.server, _ = tls.X509KeyPair(certPEM, keyPEM)
	for index, organization := range organizations {
		_, _, certPEM, keyPEM := issue(t, &x509.Certificate{
			SerialNumber: big.NewInt(int64(10 + index)), Subject: pkix.Name{CommonName: "client", Organization: []string{organization}},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
		}, ca, caKey)
		pki.clients[organization], _ = tls.X509KeyPair(certPEM, keyPEM)
	}
	return pki
}

// serve runs the real handler behind the real TLS settings (client certificates required).
func serve(t *testing.T, s *sandboxes, logsDir string, pki testPKI) *httptest.Server {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(pki.ca)
	server := httptest.NewUnstartedServer(newHandler(s, "", logsDir, []string{"system:masters", "ring0:node-proxies"}))
	server.TLS = &tls.Config{
		Certificates: []tls.Certificate{pki.server}, ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs: pool, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12,
	}
	server.StartTLS()
	t.Cleanup(server.Close)
	return server
}

func clientConfig(server *httptest.Server, pki testPKI, organization string) *restclient.Config {
	certificate := pki.clients[organization]
	keyDER, _ := x509.MarshalECPrivateKey(certificate.PrivateKey.(*ecdsa.PrivateKey))
	return &restclient.Config{
		Host: server.URL,
		TLSClientConfig: restclient.TLSClientConfig{
			CAData:   pki.caPEM,
			CertData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certificate.Certificate[0]}),
			KeyData:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		},
	}
}

func execURL(server *httptest.Server, pod string, command ...string) *url.URL {
	// The kubelet's own parameter names, as kube-apiserver sends them.
	query := url.Values{"output": {"1"}, "error": {"1"}, "command": command}
	target, _ := url.Parse(server.URL + "/exec/t12345678-default/" + pod + "/main?" + query.Encode())
	return target
}

func TestServerRefusesCallersOutsideTheAuthorizedGroups(t *testing.T) {
	pki := newTestPKI(t, "system:masters", "ring0:tenant-apiserver")
	server := serve(t, nil, t.TempDir(), pki)
	get := func(certificates []tls.Certificate) (int, error) {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs:      func() *x509.CertPool { pool := x509.NewCertPool(); pool.AddCert(pki.ca); return pool }(),
			Certificates: certificates,
		}}}
		response, err := client.Get(server.URL + "/healthz")
		if err != nil {
			return 0, err
		}
		response.Body.Close()
		return response.StatusCode, nil
	}
	if _, err := get(nil); err == nil {
		t.Fatal("a caller without a client certificate was served")
	}
	if status, err := get([]tls.Certificate{pki.clients["ring0:tenant-apiserver"]}); err != nil || status != http.StatusForbidden {
		t.Fatalf("another group: status %d, %v", status, err)
	}
	if status, err := get([]tls.Certificate{pki.clients["system:masters"]}); err != nil || status != http.StatusOK {
		t.Fatalf("an authorized group: status %d, %v", status, err)
	}
}

func TestServerExecOverSPDYAndEndsTheSandboxWhenTheClientGoes(t *testing.T) {
	s := testSandboxes(t, sandboxLimits{})
	pki := newTestPKI(t, "ring0:node-proxies")
	server := serve(t, s, t.TempDir(), pki)
	config := clientConfig(server, pki, "ring0:node-proxies")

	exec, err := remotecommand.NewSPDYExecutor(config, "POST", execURL(server, "web", "sh", "-c", "echo hi-$((6*7)); exit 4"))
	if err != nil {
		t.Fatal(err)
	}
	// One buffer per stream: two copies into one bytes.Buffer at once would race.
	var out, errOut bytes.Buffer
	err = exec.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
	if err == nil || !strings.Contains(err.Error(), "exit code 4") || out.String() != "hi-42\n" {
		t.Fatalf("exec: %q, %q, %v", out.String(), errOut.String(), err)
	}

	// A client that goes away ends its sandbox at once, not at the wall-time cap.
	exec, err = remotecommand.NewSPDYExecutor(config, "POST", execURL(server, "web", "sleep", "300"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
	}()
	waitFor(t, "the session to start", func() bool { return s.sessions() == 1 })
	cancel()
	<-done
	waitFor(t, "the session to end with its client", func() bool { return s.sessions() == 0 })
}

func TestSandboxesCapSessionsPerTenant(t *testing.T) {
	s := testSandboxes(t, sandboxLimits{memoryBytes: 32 << 20, cpuMillis: 500, pids: 32, tmpfsBytes: 1 << 20, maxDuration: time.Minute, maxSessions: 8, maxPerTenant: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = s.ExecInContainer(ctx, "t1111aaaa-default/a", "", "main", []string{"sleep", "60"}, nil, nil, nil, false, nil, 0)
	}()
	waitFor(t, "the first session", func() bool { return s.sessions() == 1 })
	err := s.ExecInContainer(context.Background(), "t1111aaaa-other/b", "", "main", []string{"true"}, nil, nil, nil, false, nil, 0)
	if err == nil || !strings.Contains(err.Error(), "this tenant already runs 1 exec sessions") {
		t.Fatalf("a second session of the same tenant: %v", err)
	}
	if err := s.ExecInContainer(context.Background(), "t2222bbbb-default/c", "", "main", []string{"true"}, nil, nil, nil, false, nil, 0); err != nil {
		t.Fatalf("another tenant's session: %v", err)
	}
}

func waitFor(t *testing.T, what string, condition func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !condition() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
