package respire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
)

// startTLSServer starts a private redis-server that accepts only TLS on a
// free loopback port, with a certificate for 127.0.0.1 made for the test.
// It returns the address and a pool trusting the certificate.
func startTLSServer(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if testenv.RequireServers() {
			t.Fatal("redis-server not found: TLS test needs it")
		}
		t.Skip("redis-server not found")
	}
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", "0", "--tls-port", strconv.Itoa(port),
		"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", certFile,
		"--tls-auth-clients", "no", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	// Readiness: poll with a TLS handshake, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := &tls.Dialer{Config: cfg, NetDialer: &net.Dialer{Timeout: time.Second}}
		c, err := d.DialContext(context.Background(), "tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("TLS redis-server on %s not ready: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a process we started, not synchronising goroutines
	}
	return addr, pool
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTLSConnectsAndRunsCommands proves that Options.TLS and rediss:// URLs
// reach a TLS-only server, verify its certificate and run commands.
func TestTLSConnectsAndRunsCommands(t *testing.T) {
	addr, pool := startTLSServer(t)
	ctx := context.Background()

	c, err := Connect(ctx, Options{Endpoints: []string{addr}, TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatalf("Connect with TLS: %v", err)
	}
	defer c.Close()
	if err := c.Set(ctx, "tls:k", "v"); err != nil {
		t.Fatalf("Set over TLS: %v", err)
	}
	if got, err := c.Get(ctx, "tls:k"); err != nil || got != "v" {
		t.Fatalf("Get over TLS = %q, %v; want \"v\", nil", got, err)
	}

	opts, err := ParseURL("rediss://" + addr + "/0")
	if err != nil {
		t.Fatal(err)
	}
	opts.TLS.RootCAs = pool
	c2, err := Connect(ctx, opts)
	if err != nil {
		t.Fatalf("Connect with rediss:// URL: %v", err)
	}
	defer c2.Close()
	if got, err := c2.Get(ctx, "tls:k"); err != nil || got != "v" {
		t.Fatalf("Get over rediss:// = %q, %v; want \"v\", nil", got, err)
	}
}

// TestTLSRejectsUntrustedCertificate proves that certificate verification
// is on: without the test CA, Connect fails with a connection error.
func TestTLSRejectsUntrustedCertificate(t *testing.T) {
	addr, _ := startTLSServer(t)
	_, err := Connect(context.Background(), Options{Endpoints: []string{addr}, TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
	var ce *ConnError
	if !errors.As(err, &ce) {
		t.Fatalf("Connect to an untrusted certificate: err = %v; want *ConnError", err)
	}
	var uerr x509.UnknownAuthorityError
	if !errors.As(err, &uerr) {
		t.Fatalf("err = %v; want it to wrap x509.UnknownAuthorityError", err)
	}
}
