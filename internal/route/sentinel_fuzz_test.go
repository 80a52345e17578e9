package route

import (
	"bytes"
	"errors"
	"testing"

	"github.com/respire-go/respire/resp"
)

// sentinelSeeds are replies a sentinel sends to discovery: an address, a
// list of replicas or sentinels as flat arrays or maps, and odd shapes.
func sentinelSeeds() []resp.Value {
	bulk := func(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
	arr := func(vs ...resp.Value) resp.Value { return resp.Value{Type: resp.Array, Elems: vs} }
	replica := arr(bulk("ip"), bulk("10.0.0.2"), bulk("port"), bulk("6380"),
		bulk("flags"), bulk("slave"), bulk("master-link-status"), bulk("ok"))
	return []resp.Value{
		arr(bulk("10.0.0.1"), bulk("6379")),
		arr(bulk("::1"), bulk("99999")),
		arr(bulk("h")),
		{Type: resp.Null},
		arr(replica, arr(bulk("ip"), bulk("h"), bulk("port")), bulk("x")),
		{Type: resp.Map, Elems: []resp.Value{bulk("ip"), bulk("h"), bulk("port"), bulk("1")}},
		arr(arr(bulk("flags"), bulk("s_down,"), bulk("ip"), bulk("h"), bulk("port"), bulk("1"))),
	}
}

// FuzzSentinelReplies: the parsers of SENTINEL GET-MASTER-ADDR-BY-NAME,
// REPLICAS and SENTINELS replies never panic on any reply, and every
// address they return is a host:port with a port from 1 through 65535;
// a refused primary address is an ErrBadTopology.
func FuzzSentinelReplies(f *testing.F) {
	for _, v := range sentinelSeeds() {
		f.Add(resp.AppendValue(nil, v, 3))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := resp.NewReader(bytes.NewReader(data)).ReadValue()
		if err != nil {
			return
		}
		addr, err := primaryAddr(v)
		if err != nil {
			if !errors.Is(err, ErrBadTopology) {
				t.Fatalf("primaryAddr error %v is not ErrBadTopology", err)
			}
		} else if checkAddr(addr) != nil {
			t.Fatalf("primaryAddr returned %q", addr)
		}
		for _, replicas := range []bool{false, true} {
			for _, a := range instances(v, replicas) {
				if checkAddr(a) != nil {
					t.Fatalf("instances(%v) returned %q", replicas, a)
				}
			}
		}
	})
}
