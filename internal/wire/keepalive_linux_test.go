package wire

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestDefaultDialerKeepAlive proves that a connection opened by the
// default dialer (Config.Dial nil) has TCP keepalive enabled with the
// documented settings, read back from the socket: first probe after 15 s
// idle, then every 15 s, dropped after 3 unanswered probes (the kernel's
// default count is 9).
func TestDefaultDialerKeepAlive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			accepted <- nc
		}
		close(accepted)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Proto 2 and nothing to prepare: no handshake, the listener need not
	// speak RESP.
	c, err := Dial(ctx, Config{Addr: ln.Addr().String(), Proto: 2}, nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if srv := <-accepted; srv != nil {
		defer srv.Close()
	}
	tc, ok := c.nc.Conn.(*net.TCPConn)
	if !ok {
		t.Fatalf("socket is %T, want *net.TCPConn", c.nc.Conn)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	opts := []struct {
		name       string
		level, opt int
		want       int
	}{
		{"SO_KEEPALIVE", syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{"TCP_KEEPIDLE", syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, 15},
		{"TCP_KEEPINTVL", syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, 15},
		{"TCP_KEEPCNT", syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, 3},
	}
	for _, o := range opts {
		var got int
		var gerr error
		if err := rc.Control(func(fd uintptr) { got, gerr = syscall.GetsockoptInt(int(fd), o.level, o.opt) }); err != nil {
			t.Fatal(err)
		}
		if gerr != nil {
			t.Fatalf("getsockopt %s: %v", o.name, gerr)
		}
		if got != o.want {
			t.Errorf("%s = %d, want %d", o.name, got, o.want)
		}
	}
}
