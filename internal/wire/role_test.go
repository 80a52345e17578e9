package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/respire-go/respire/resp"
)

// TestCheckRoleReplicaFollows: a replica passes only when ROLE names the
// primary Follows returns, in any written form of its address, with its
// link "connected"; a host name against an IP address is not refused.
func TestCheckRoleReplicaFollows(t *testing.T) {
	role := func(elems ...resp.Value) resp.Value { return resp.Value{Type: resp.Array, Elems: elems} }
	str := func(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
	num := func(n int64) resp.Value { return resp.Value{Type: resp.Integer, Int: n} }
	replica := func(host string, port int64, state string) resp.Value {
		return role(str("slave"), str(host), num(port), str(state), num(0))
	}
	tests := []struct {
		name    string
		follows string
		v       resp.Value
		ok      bool
	}{
		{"SamePrimary", "127.0.0.1:6380", replica("127.0.0.1", 6380, "connected"), true},
		{"IPv6WrittenOtherwise", "[::1]:6380", replica("0:0::1", 6380, "connected"), true},
		{"HostNameAnyCase", "Redis.Test:6380", replica("redis.test", 6380, "connected"), true},
		{"HostNameAgainstIP", "redis.test:6380", replica("10.0.0.1", 6380, "connected"), true},
		{"NoPrimaryKnown", "", replica("10.0.0.1", 1, "connect"), true},
		{"OtherPort", "127.0.0.1:6380", replica("127.0.0.1", 6381, "connected"), false},
		{"OtherIP", "127.0.0.1:6380", replica("127.0.0.2", 6380, "connected"), false},
		{"OtherHostName", "a.test:6380", replica("b.test", 6380, "connected"), false},
		{"LinkConnect", "127.0.0.1:6380", replica("127.0.0.1", 6380, "connect"), false},
		{"LinkConnecting", "127.0.0.1:6380", replica("127.0.0.1", 6380, "connecting"), false},
		{"LinkSync", "127.0.0.1:6380", replica("127.0.0.1", 6380, "sync"), false},
		{"LinkHandshake", "127.0.0.1:6380", replica("127.0.0.1", 6380, "handshake"), false},
		{"Truncated", "127.0.0.1:6380", role(str("slave"), str("127.0.0.1")), false},
		{"APrimary", "127.0.0.1:6380", role(str("master"), num(0), role()), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Addr: "r.test:1", Role: "slave", Follows: func() string { return tt.follows }}
			err := checkRole(cfg, tt.v)
			if tt.ok != (err == nil) {
				t.Fatalf("checkRole = %v, want ok %v", err, tt.ok)
			}
			if err != nil && (!errors.Is(err, ErrWrongRole) || !strings.Contains(err.Error(), "r.test:1")) {
				t.Errorf("err = %v, want ErrWrongRole naming the replica", err)
			}
		})
	}
}
