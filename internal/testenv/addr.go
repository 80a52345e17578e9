package testenv

import (
	"net"
	"testing"
)

// FreeAddr returns a 127.0.0.1 address on which nothing listens (a port
// that was free a moment ago): a dial to it is refused.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
