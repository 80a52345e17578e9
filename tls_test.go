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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
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
	tc := newTestCert(t, "127.0.0.1")
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, certFile, "CERTIFICATE", tc.der)
	writePEM(t, keyFile, "EC PRIVATE KEY", tc.keyDER)
	pool := tc.pool

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

// testCert is a self-signed certificate made for one test.
type testCert struct {
	der, keyDER []byte
	cert        tls.Certificate
	pool        *x509.CertPool // trusts the certificate
}

// newTestCert makes a self-signed server certificate for host (an IP
// address or a DNS name).
func newTestCert(t *testing.T, host string) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: host},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return testCert{der: der, keyDER: keyDER, pool: pool,
		cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}
}

// tlsMemServer is an in-memory server behind TLS: its Dial (for
// Options.Dialer) completes the server side of the handshake with cfg and
// serves the connection from srv. It records the server name of each
// ClientHello.
type tlsMemServer struct {
	srv   *respiretest.Server
	cfg   *tls.Config
	mu    sync.Mutex
	names []string
}

func newTLSMemServer(t *testing.T, cert tls.Certificate) *tlsMemServer {
	s := &tlsMemServer{srv: respiretest.NewServer(t, respiretest.InMemory())}
	s.cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			s.mu.Lock()
			s.names = append(s.names, h.ServerName)
			s.mu.Unlock()
			return nil, nil
		}}
	return s
}

func (s *tlsMemServer) Dial(context.Context, string, string) (net.Conn, error) {
	c, sc := net.Pipe()
	if !s.srv.ServeConn(tls.Server(sc, s.cfg)) {
		c.Close()
		return nil, respiretest.ErrClosed
	}
	return c, nil
}

func (s *tlsMemServer) serverNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.names)
}

// tlsListener accepts TCP connections on a loopback port and completes
// the server side of their TLS handshake with cert, then closes them: a
// server whose certificate a client may refuse. It returns the address.
func tlsListener(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				_ = tls.Server(c, cfg).Handshake()
			})
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
	})
	return l.Addr().String()
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

// TestTLSServerNameDefaultsToHostEvenWithoutVerification proves that the
// endpoint's host is sent as the server name (SNI) when ServerName is
// empty, as Options.TLS documents, also with InsecureSkipVerify: a proxy
// that routes TLS connections by server name needs it either way.
func TestTLSServerNameDefaultsToHostEvenWithoutVerification(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestCert(t, "cache.test")
		for _, tt := range []struct {
			name string
			cfg  *tls.Config
			want string
		}{
			{"Verified", &tls.Config{RootCAs: tc.pool, MinVersion: tls.VersionTLS12}, "cache.test"},
			{"InsecureSkipVerify", &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, "cache.test"},
			{"ExplicitServerName", &tls.Config{RootCAs: tc.pool, ServerName: "cache.test", MinVersion: tls.VersionTLS12}, "cache.test"},
		} {
			s := newTLSMemServer(t, tc.cert)
			c, err := Connect(context.Background(), Options{Endpoints: []string{"cache.test:6380"}, TLS: tt.cfg, Dialer: s.Dial})
			if err != nil {
				t.Errorf("%s: Connect: %v", tt.name, err)
				continue
			}
			if err := c.Ping(context.Background()); err != nil {
				t.Errorf("%s: Ping over TLS: %v", tt.name, err)
			}
			_ = c.Close()
			if got := s.serverNames(); len(got) == 0 || got[0] != tt.want {
				t.Errorf("%s: server names %q, want %q first", tt.name, got, tt.want)
			}
		}
	})
}

// A panic in a callback of Options.TLS (VerifyConnection here), which
// runs on the client's dial goroutines as the Dialer does, fails that
// dial with an error instead of ending the process.
func TestTLSCallbackPanicFailsTheDial(t *testing.T) {
	tc := newTestCert(t, "127.0.0.1")
	addr := tlsListener(t, tc.cert)
	cfg := &tls.Config{RootCAs: tc.pool, MinVersion: tls.VersionTLS12,
		VerifyConnection: func(tls.ConnectionState) error { panic("verify boom") }}
	c, err := Connect(testCtx(t), Options{Endpoints: []string{addr}, TLS: cfg})
	if err == nil {
		_ = c.Close()
		t.Fatal("Connect succeeded; want the panic as its error")
	}
	var ce *ConnError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "verify boom") {
		t.Fatalf("Connect: %v; want a *ConnError naming the panic", err)
	}
}
