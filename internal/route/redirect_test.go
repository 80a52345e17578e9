package route_test

import (
	"errors"
	"testing"

	"github.com/respire-go/respire/internal/route"
)

func TestParseRedirect(t *testing.T) {
	tests := []struct {
		text   string
		want   route.Redirect
		ok     bool
		errors bool
	}{
		{"MOVED 3999 127.0.0.1:6381", route.Redirect{Slot: 3999, Addr: "127.0.0.1:6381"}, true, false},
		{"ASK 3999 127.0.0.1:6381", route.Redirect{Ask: true, Slot: 3999, Addr: "127.0.0.1:6381"}, true, false},
		{"MOVED 0 redis-1.example:6379", route.Redirect{Slot: 0, Addr: "redis-1.example:6379"}, true, false},
		{"MOVED 16383 10.0.0.1:65535", route.Redirect{Slot: 16383, Addr: "10.0.0.1:65535"}, true, false},
		{"MOVED 12182 :6380", route.Redirect{Slot: 12182, Addr: ":6380"}, true, false},
		{"ASK 1 ?:6380", route.Redirect{Ask: true, Slot: 1, Addr: ":6380"}, true, false},
		{"MOVED 5 ::1:6380", route.Redirect{Slot: 5, Addr: "[::1]:6380"}, true, false},
		{"MOVED 5 [::1]:6380", route.Redirect{Slot: 5, Addr: "[::1]:6380"}, true, false},
		{"MOVED 5 fe80::1%eth0:6380", route.Redirect{Slot: 5, Addr: "[fe80::1%eth0]:6380"}, true, false},
		{"MOVED 7 10.0.0.1:6379 ", route.Redirect{Slot: 7, Addr: "10.0.0.1:6379"}, true, false},

		// Not redirects.
		{"", route.Redirect{}, false, false},
		{"ERR unknown command", route.Redirect{}, false, false},
		{"MOVEDX 1 a:1", route.Redirect{}, false, false},
		{"ASKING", route.Redirect{}, false, false},
		{"moved 1 a:1", route.Redirect{}, false, false},
		{" MOVED 1 a:1", route.Redirect{}, false, false},
		{"TRYAGAIN Multiple keys request during rehashing of slot", route.Redirect{}, false, false},
		{"CLUSTERDOWN Hash slot not served", route.Redirect{}, false, false},
		{"MOVE", route.Redirect{}, false, false},

		// Malformed redirects.
		{"MOVED", route.Redirect{}, true, true},
		{"ASK ", route.Redirect{}, true, true},
		{"MOVED 3999", route.Redirect{}, true, true},
		{"MOVED 3999 ", route.Redirect{}, true, true},
		{"MOVED 16384 127.0.0.1:6381", route.Redirect{}, true, true},
		{"MOVED -1 127.0.0.1:6381", route.Redirect{}, true, true},
		{"MOVED +1 127.0.0.1:6381", route.Redirect{}, true, true},
		{"MOVED 99999999999999999999 127.0.0.1:6381", route.Redirect{}, true, true},
		{"MOVED x 127.0.0.1:6381", route.Redirect{}, true, true},
		{"MOVED 1 127.0.0.1", route.Redirect{}, true, true},
		{"MOVED 1 127.0.0.1:", route.Redirect{}, true, true},
		{"MOVED 1 127.0.0.1:0", route.Redirect{}, true, true},
		{"MOVED 1 127.0.0.1:65536", route.Redirect{}, true, true},
		{"MOVED 1 127.0.0.1:-5", route.Redirect{}, true, true},
		{"MOVED 1 127.0.0.1:6x", route.Redirect{}, true, true},
		{"MOVED 1 []:6379", route.Redirect{}, true, true},
		{"MOVED 1 [::1:6379", route.Redirect{}, true, true},
		{"MOVED 1 a\x00b:6379", route.Redirect{}, true, true},
		{"MOVED 1 127.0.0.1:6381 extra", route.Redirect{}, true, true},
	}
	for _, tt := range tests {
		r, ok, err := route.ParseRedirect([]byte(tt.text))
		if ok != tt.ok || (err != nil) != tt.errors || r != tt.want {
			t.Errorf("ParseRedirect(%q) = %+v, %v, %v; want %+v, %v, error %v", tt.text, r, ok, err, tt.want, tt.ok, tt.errors)
		}
		if err != nil && !errors.Is(err, route.ErrBadRedirect) {
			t.Errorf("ParseRedirect(%q): error %v does not wrap ErrBadRedirect", tt.text, err)
		}
	}
}

func TestParseRedirectNoAllocWhenNotRedirect(t *testing.T) {
	for _, text := range []string{"", "ERR unknown command 'FOO'", "WRONGTYPE Operation against a key holding the wrong kind of value", "MOVEDX 1 a:1", "ASKING", "MOVE"} {
		b := []byte(text)
		n := testing.AllocsPerRun(100, func() {
			if _, ok, _ := route.ParseRedirect(b); ok {
				t.Fatalf("%q parsed as a redirect", text)
			}
		})
		if n != 0 {
			t.Errorf("ParseRedirect(%q) allocates %v times", text, n)
		}
	}
}

func BenchmarkParseRedirect(b *testing.B) {
	moved := []byte("MOVED 3999 127.0.0.1:6381")
	other := []byte("ERR unknown command 'FOO'")
	b.Run("moved", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _, _ = route.ParseRedirect(moved)
		}
	})
	b.Run("other", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _, _ = route.ParseRedirect(other)
		}
	})
}
