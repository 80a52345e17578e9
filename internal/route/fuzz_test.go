package route_test

import (
	"bytes"
	"errors"
	"net"
	"strconv"
	"testing"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/resp"
)

// fuzzValue decodes one RESP value from data, if data holds one.
func fuzzValue(data []byte) (resp.Value, bool) {
	v, err := resp.NewReader(bytes.NewReader(data)).ReadValue()
	return v, err == nil
}

// checkTable checks what a parser returned, then runs it through Owners as
// the cluster topology does.
func checkTable(t *testing.T, shards []route.Shard, err error) {
	if err != nil {
		if shards != nil {
			t.Fatalf("shards %+v returned with error %v", shards, err)
		}
		if !errors.Is(err, route.ErrBadTopology) {
			t.Fatalf("error %v does not wrap ErrBadTopology", err)
		}
		return
	}
	for _, sh := range shards {
		if len(sh.Ranges) == 0 {
			t.Fatalf("slot-less shard %+v returned", sh)
		}
		for _, r := range sh.Ranges {
			if r[0] < 0 || r[0] > r[1] || r[1] >= route.Slots {
				t.Fatalf("bad range %v returned", r)
			}
		}
		if _, _, err := net.SplitHostPort(sh.Primary); err != nil {
			t.Fatalf("bad primary %q returned", sh.Primary)
		}
	}
	owners, err := route.Owners(shards)
	if err != nil {
		if !errors.Is(err, route.ErrBadTopology) {
			t.Fatalf("Owners error %v does not wrap ErrBadTopology", err)
		}
		return
	}
	for s, o := range owners {
		if o < -1 || int(o) >= len(shards) {
			t.Fatalf("slot %d owner %d out of range", s, o)
		}
	}
}

func FuzzParseShards(f *testing.F) {
	for _, tt := range shardsCases() {
		if tt.name == "huge shard list" || tt.name == "huge slots array" {
			continue
		}
		for _, r3 := range []bool{false, true} {
			f.Add(resp.AppendValue(nil, tt.reply(r3), 3), tt.tls)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, tls bool) {
		v, ok := fuzzValue(data)
		if !ok {
			return
		}
		shards, err := route.ParseShards(v, "10.0.0.9", tls)
		checkTable(t, shards, err)
	})
}

func FuzzParseSlots(f *testing.F) {
	for _, tt := range slotsCases() {
		if tt.name == "huge reply" {
			continue
		}
		for _, r3 := range []bool{false, true} {
			f.Add(resp.AppendValue(nil, tt.reply(r3), 3))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := fuzzValue(data)
		if !ok {
			return
		}
		shards, err := route.ParseSlots(v, "10.0.0.9")
		checkTable(t, shards, err)
	})
}

func FuzzParseRedirect(f *testing.F) {
	for _, s := range []string{
		"MOVED 3999 127.0.0.1:6381", "ASK 3999 127.0.0.1:6381", "MOVED 1 :6380",
		"MOVED 5 ::1:6380", "ASK 16383 [::1]:1", "MOVED 16384 a:1", "MOVED", "ERR x",
		"MOVED 1 a:1 b", "ASK 0 ?:65535",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		r, ok, err := route.ParseRedirect(text)
		if !ok {
			if err != nil || r != (route.Redirect{}) {
				t.Fatalf("not a redirect, yet %+v, %v", r, err)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, route.ErrBadRedirect) || r != (route.Redirect{}) {
				t.Fatalf("error %v with %+v", err, r)
			}
			return
		}
		if r.Slot < 0 || r.Slot >= route.Slots {
			t.Fatalf("slot %d", r.Slot)
		}
		_, port, serr := net.SplitHostPort(r.Addr)
		if p, perr := strconv.Atoi(port); serr != nil || perr != nil || p < 1 || p > 65535 {
			t.Fatalf("address %q", r.Addr)
		}
		// The normalized form parses to itself.
		word := "MOVED "
		if r.Ask {
			word = "ASK "
		}
		again, ok2, err2 := route.ParseRedirect([]byte(word + strconv.Itoa(r.Slot) + " " + r.Addr))
		if !ok2 || err2 != nil || again != r {
			t.Fatalf("%+v reparsed as %+v, %v, %v", r, again, ok2, err2)
		}
	})
}
