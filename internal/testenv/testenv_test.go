package testenv

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// recorder is a testing.TB whose Skipf and Fatalf record instead of stopping
// the test, named name when that is set.
type recorder struct {
	testing.TB
	name            string
	skipped, failed string
}

func (r *recorder) Name() string {
	if r.name != "" {
		return r.name
	}
	return r.TB.Name()
}

func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestMissingVariable(t *testing.T) {
	tests := []struct {
		require  string
		wantSkip bool
	}{
		{require: "", wantSkip: true},
		{require: "0", wantSkip: true},
		{require: "1", wantSkip: false},
	}
	helpers := map[string]func(testing.TB) any{
		EnvStandaloneAddr:      func(t testing.TB) any { return Standalone(t) },
		EnvSentinelAddrs:       func(t testing.TB) any { return SentinelAddrs(t) },
		EnvSentinelMaster:      func(t testing.TB) any { return SentinelMaster(t) },
		EnvSentinelPrimaryAddr: func(t testing.TB) any { return SentinelPrimary(t) },
		EnvSentinelReplicaAddr: func(t testing.TB) any { return SentinelReplica(t) },
		EnvClusterAddrs:        func(t testing.TB) any { return ClusterAddrs(t) },
	}
	for _, tt := range tests {
		for name, helper := range helpers {
			t.Run(name+"/require="+tt.require, func(t *testing.T) {
				t.Setenv(EnvRequireServers, tt.require)
				t.Setenv(name, "  ") // blank counts as missing
				r := &recorder{TB: t}
				helper(r)
				if got := r.skipped != ""; got != tt.wantSkip {
					t.Errorf("skipped = %v, want %v", got, tt.wantSkip)
				}
				if got := r.failed != ""; got != !tt.wantSkip {
					t.Errorf("failed = %v, want %v", got, !tt.wantSkip)
				}
				if msg := r.skipped + r.failed; !strings.Contains(msg, name) {
					t.Errorf("message %q does not name %s", msg, name)
				}
			})
		}
	}
}

func TestLists(t *testing.T) {
	t.Setenv(EnvClusterAddrs, " 127.0.0.1:1 ,,127.0.0.1:2,")
	got := ClusterAddrs(t)
	want := []string{"127.0.0.1:1", "127.0.0.1:2"}
	if !slices.Equal(got, want) {
		t.Errorf("ClusterAddrs = %q, want %q", got, want)
	}
}

// ping sends a raw RESP PING to addr and checks for +PONG.
func ping(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		t.Fatalf("write PING to %s: %v", addr, err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("read reply from %s: %v", addr, err)
	}
	if got, want := line, "+PONG\r\n"; got != want {
		t.Errorf("PING %s = %q, want %q", addr, got, want)
	}
}

func TestServersAnswerPING(t *testing.T) {
	groups := map[string]func(testing.TB) []string{
		"standalone": func(t testing.TB) []string { return []string{Standalone(t)} },
		"sentinels":  SentinelAddrs,
		"sentinel-data": func(t testing.TB) []string {
			return []string{SentinelPrimary(t), SentinelReplica(t)}
		},
		"cluster": ClusterAddrs,
	}
	for name, addrs := range groups {
		t.Run(name, func(t *testing.T) {
			for _, addr := range addrs(t) {
				t.Run(addr, func(t *testing.T) {
					t.Parallel()
					ping(t, addr)
				})
			}
		})
	}
}

func TestSentinelMasterName(t *testing.T) {
	if got := SentinelMaster(t); got == "" {
		t.Error("SentinelMaster is empty")
	}
}
