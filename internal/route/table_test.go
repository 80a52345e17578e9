package route_test

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/resp"
)

// Builders of hand-made replies.

func tvBulk(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
func tvInt(n int64) resp.Value   { return resp.Value{Type: resp.Integer, Int: n} }
func tvNull() resp.Value         { return resp.Value{Type: resp.Null} }
func tvArr(elems ...resp.Value) resp.Value {
	return resp.Value{Type: resp.Array, Elems: elems}
}

// tvObj builds a map: a RESP3 map, or with resp2 the flat key/value array
// Redis sends to RESP2 clients.
func tvObj(resp3 bool, kv ...resp.Value) resp.Value {
	if resp3 {
		return resp.Value{Type: resp.Map, Elems: kv}
	}
	return resp.Value{Type: resp.Array, Elems: kv}
}

// shardNodeSpec describes one node of a CLUSTER SHARDS reply.
type shardNodeSpec struct {
	id, ip, endpoint, hostname, role, health string
	port, tlsPort                            int64
}

// shardsNode renders a node the way Redis 7.0 does: id, port, [tls-port],
// ip, endpoint, [hostname], role, replication-offset, health.
func shardsNode(resp3 bool, n shardNodeSpec) resp.Value {
	kv := []resp.Value{tvBulk("id"), tvBulk(n.id), tvBulk("port"), tvInt(n.port)}
	if n.tlsPort != 0 {
		kv = append(kv, tvBulk("tls-port"), tvInt(n.tlsPort))
	}
	kv = append(kv, tvBulk("ip"), tvBulk(n.ip), tvBulk("endpoint"), tvBulk(n.endpoint))
	if n.hostname != "" {
		kv = append(kv, tvBulk("hostname"), tvBulk(n.hostname))
	}
	kv = append(kv,
		tvBulk("role"), tvBulk(n.role),
		tvBulk("replication-offset"), tvInt(72156),
		tvBulk("health"), tvBulk(n.health))
	return tvObj(resp3, kv...)
}

// shardsEntry renders one shard: slots (pairs of integers) and nodes.
func shardsEntry(resp3 bool, slots []int64, nodes ...shardNodeSpec) resp.Value {
	sl := make([]resp.Value, len(slots))
	for i, s := range slots {
		sl[i] = tvInt(s)
	}
	ns := make([]resp.Value, len(nodes))
	for i, n := range nodes {
		ns[i] = shardsNode(resp3, n)
	}
	return tvObj(resp3, tvBulk("slots"), tvArr(sl...), tvBulk("nodes"), tvArr(ns...))
}

func master(id, ip string, port int64) shardNodeSpec {
	return shardNodeSpec{id: id, ip: ip, endpoint: ip, role: "master", health: "online", port: port}
}

func replica(id, ip string, port int64, health string) shardNodeSpec {
	return shardNodeSpec{id: id, ip: ip, endpoint: ip, role: "replica", health: health, port: port}
}

// threeShards is a CLUSTER SHARDS reply of a healthy 3 primary, 3 replica
// cluster, one replica failed.
func threeShards(resp3 bool) resp.Value {
	return tvArr(
		shardsEntry(resp3, []int64{0, 5460},
			master("aaa", "127.0.0.1", 7000),
			replica("ddd", "127.0.0.1", 7003, "online")),
		shardsEntry(resp3, []int64{5461, 10922},
			replica("eee", "127.0.0.1", 7004, "failed"),
			master("bbb", "127.0.0.1", 7001)),
		shardsEntry(resp3, []int64{10923, 16383},
			master("ccc", "127.0.0.1", 7002),
			replica("fff", "127.0.0.1", 7005, "loading")),
	)
}

func wantThreeShards() []route.Shard {
	return []route.Shard{
		{Ranges: [][2]int{{0, 5460}}, Primary: "127.0.0.1:7000", PrimaryID: "aaa", Replicas: []string{"127.0.0.1:7003"}},
		{Ranges: [][2]int{{5461, 10922}}, Primary: "127.0.0.1:7001", PrimaryID: "bbb"},
		{Ranges: [][2]int{{10923, 16383}}, Primary: "127.0.0.1:7002", PrimaryID: "ccc"},
	}
}

type shardsCase struct {
	name     string
	reply    func(resp3 bool) resp.Value
	fallback string
	tls      bool
	want     []route.Shard
	wantErr  string // substring of the error; "" for success
}

func shardsCases() []shardsCase {
	return []shardsCase{
		{
			name:  "three shards",
			reply: threeShards,
			want:  wantThreeShards(),
		},
		{
			name:  "empty reply",
			reply: func(bool) resp.Value { return tvArr() },
		},
		{
			name: "several ranges and a slot-less shard",
			reply: func(r3 bool) resp.Value {
				return tvArr(
					shardsEntry(r3, []int64{0, 99, 200, 200, 300, 16383},
						master("aaa", "10.0.0.1", 6379)),
					shardsEntry(r3, nil, master("bbb", "", 0)),
					shardsEntry(r3, []int64{100, 199, 201, 299},
						master("ccc", "10.0.0.2", 6379)),
				)
			},
			want: []route.Shard{
				{Ranges: [][2]int{{0, 99}, {200, 200}, {300, 16383}}, Primary: "10.0.0.1:6379", PrimaryID: "aaa"},
				{Ranges: [][2]int{{100, 199}, {201, 299}}, Primary: "10.0.0.2:6379", PrimaryID: "ccc"},
			},
		},
		{
			name: "hostname endpoint preferred over ip",
			reply: func(r3 bool) resp.Value {
				m := master("aaa", "10.0.0.1", 6379)
				m.endpoint, m.hostname = "redis-0.example", "redis-0.example"
				return tvArr(shardsEntry(r3, []int64{0, 16383}, m))
			},
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "redis-0.example:6379", PrimaryID: "aaa"}},
		},
		{
			// "?" is a hostname endpoint without a hostname: the ip names
			// the node. An empty endpoint is cluster-preferred-endpoint-type
			// unknown-endpoint: the ip is the node's own (behind a load
			// balancer or NAT, unreachable to clients), and clients are to
			// use the host they asked, as the redirects ":port" say.
			name: "unknown hostname falls back to ip, unknown endpoint to the host asked",
			reply: func(r3 bool) resp.Value {
				m := master("aaa", "10.0.0.1", 6379)
				m.endpoint = "?"
				r := replica("bbb", "", 6380, "online")
				r.endpoint = ""
				r2 := replica("ccc", "?", 6381, "online")
				r2.endpoint = "?"
				lb := replica("ddd", "172.17.0.3", 6382, "online")
				lb.endpoint = ""
				return tvArr(shardsEntry(r3, []int64{0, 16383}, m, r, r2, lb))
			},
			fallback: "seed.example",
			want: []route.Shard{{
				Ranges:    [][2]int{{0, 16383}},
				Primary:   "10.0.0.1:6379",
				PrimaryID: "aaa",
				Replicas:  []string{"seed.example:6380", "seed.example:6381", "seed.example:6382"},
			}},
		},
		{
			name: "ipv6",
			reply: func(r3 bool) resp.Value {
				return tvArr(shardsEntry(r3, []int64{0, 16383}, master("aaa", "::1", 6379)))
			},
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "[::1]:6379", PrimaryID: "aaa"}},
		},
		{
			name: "tls port",
			reply: func(r3 bool) resp.Value {
				m := master("aaa", "10.0.0.1", 6379)
				m.tlsPort = 16379
				r := replica("bbb", "10.0.0.2", 6379, "online")
				r.tlsPort = 16379
				return tvArr(shardsEntry(r3, []int64{0, 16383}, m, r))
			},
			tls:  true,
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.0.0.1:16379", PrimaryID: "aaa", Replicas: []string{"10.0.0.2:16379"}}},
		},
		{
			name: "plain port when tls is off",
			reply: func(r3 bool) resp.Value {
				m := master("aaa", "10.0.0.1", 6379)
				m.tlsPort = 16379
				return tvArr(shardsEntry(r3, []int64{0, 16383}, m))
			},
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.0.0.1:6379", PrimaryID: "aaa"}},
		},
		{
			name: "tls without tls-port uses port",
			reply: func(r3 bool) resp.Value {
				return tvArr(shardsEntry(r3, []int64{0, 16383}, master("aaa", "10.0.0.1", 6379)))
			},
			tls:  true,
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.0.0.1:6379", PrimaryID: "aaa"}},
		},
		{
			name: "slots and port as decimal strings",
			reply: func(r3 bool) resp.Value {
				return tvArr(tvObj(r3,
					tvBulk("slots"), tvArr(tvBulk("0"), resp.Value{Type: resp.SimpleString, Str: []byte("16383")}),
					tvBulk("nodes"), tvArr(tvObj(r3,
						tvBulk("id"), tvBulk("aaa"),
						tvBulk("port"), tvBulk("6379"),
						tvBulk("ip"), tvBulk("10.0.0.1"),
						tvBulk("role"), tvBulk("master"),
						tvBulk("health"), tvBulk("online"),
					)),
				))
			},
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.0.0.1:6379", PrimaryID: "aaa"}},
		},
		{
			name: "old failed primary beside the new one",
			reply: func(r3 bool) resp.Value {
				old := master("aaa", "10.0.0.1", 6379)
				old.health = "failed"
				return tvArr(shardsEntry(r3, []int64{0, 16383}, old, master("bbb", "10.0.0.2", 6379)))
			},
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.0.0.2:6379", PrimaryID: "bbb"}},
		},
		{
			name: "failed only primary kept",
			reply: func(r3 bool) resp.Value {
				m := master("aaa", "10.0.0.1", 6379)
				m.health = "failed"
				return tvArr(shardsEntry(r3, []int64{0, 16383}, m))
			},
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.0.0.1:6379", PrimaryID: "aaa"}},
		},
		{
			name: "failed replica with a bad address ignored",
			reply: func(r3 bool) resp.Value {
				return tvArr(shardsEntry(r3, []int64{0, 16383},
					master("aaa", "10.0.0.1", 6379), replica("bbb", "10.0.0.2", 0, "failed")))
			},
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.0.0.1:6379", PrimaryID: "aaa"}},
		},

		// Rejected replies.
		{name: "error reply", reply: func(bool) resp.Value {
			return resp.Value{Type: resp.SimpleError, Str: []byte("ERR This instance has cluster support disabled")}
		}, wantErr: "cluster support disabled"},
		{name: "null reply", reply: func(bool) resp.Value { return tvNull() }, wantErr: "not an array"},
		{name: "integer reply", reply: func(bool) resp.Value { return tvInt(3) }, wantErr: "not an array"},
		{name: "shard not a map", reply: func(bool) resp.Value { return tvArr(tvBulk("slots")) }, wantErr: "not a map"},
		{name: "shard odd flat array", reply: func(bool) resp.Value {
			return tvArr(tvArr(tvBulk("slots"), tvArr(), tvBulk("nodes")))
		}, wantErr: "not a map"},
		{name: "no slots field", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("nodes"), tvArr()))
		}, wantErr: `no "slots"`},
		{name: "no nodes field", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("slots"), tvArr(tvInt(0), tvInt(1))))
		}, wantErr: `no "nodes"`},
		{name: "slots not an array", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("slots"), tvBulk("0-16383"), tvBulk("nodes"), tvArr()))
		}, wantErr: "not an array"},
		{name: "odd slots", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{0, 100, 200}, master("aaa", "10.0.0.1", 6379)))
		}, wantErr: "odd length"},
		{name: "negative slot", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{-1, 100}, master("aaa", "10.0.0.1", 6379)))
		}, wantErr: "outside"},
		{name: "slot 16384", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{0, 16384}, master("aaa", "10.0.0.1", 6379)))
		}, wantErr: "outside"},
		{name: "start after end", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{100, 99}, master("aaa", "10.0.0.1", 6379)))
		}, wantErr: "after its end"},
		{name: "slot not a number", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("slots"), tvArr(tvBulk("0x10"), tvInt(20)), tvBulk("nodes"), tvArr()))
		}, wantErr: "not an integer"},
		{name: "slot a double", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("slots"), tvArr(tvInt(0), resp.Value{Type: resp.Double, Float: 5}), tvBulk("nodes"), tvArr()))
		}, wantErr: "not an integer"},
		{name: "huge slots array", reply: func(r3 bool) resp.Value {
			sl := make([]int64, 2*route.Slots+2)
			return tvArr(shardsEntry(r3, sl, master("aaa", "10.0.0.1", 6379)))
		}, wantErr: "ranges"},
		{name: "huge shard list", reply: func(r3 bool) resp.Value {
			list := make([]resp.Value, route.Slots+1)
			for i := range list {
				list[i] = shardsEntry(r3, nil)
			}
			return tvArr(list...)
		}, wantErr: "shards"},
		{name: "nodes not an array", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("slots"), tvArr(tvInt(0), tvInt(1)), tvBulk("nodes"), tvInt(1)))
		}, wantErr: "not an array"},
		{name: "node not a map", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("slots"), tvArr(tvInt(0), tvInt(1)), tvBulk("nodes"), tvArr(tvBulk("x"))))
		}, wantErr: "not a map"},
		{name: "missing port", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("slots"), tvArr(tvInt(0), tvInt(1)), tvBulk("nodes"), tvArr(tvObj(r3,
				tvBulk("ip"), tvBulk("10.0.0.1"), tvBulk("role"), tvBulk("master"), tvBulk("health"), tvBulk("online")))))
		}, wantErr: `no "port"`},
		{name: "port zero", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{0, 16383}, master("aaa", "10.0.0.1", 0)))
		}, wantErr: "port outside"},
		{name: "port too big", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{0, 16383}, master("aaa", "10.0.0.1", 65536)))
		}, wantErr: "outside 0-65535"},
		{name: "negative port", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{0, 16383}, master("aaa", "10.0.0.1", -6379)))
		}, wantErr: "outside 0-65535"},
		{name: "port not a number", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("slots"), tvArr(tvInt(0), tvInt(1)), tvBulk("nodes"), tvArr(tvObj(r3,
				tvBulk("port"), tvBulk("63x9"), tvBulk("ip"), tvBulk("10.0.0.1"), tvBulk("role"), tvBulk("master")))))
		}, wantErr: "not an integer"},
		{name: "online replica port zero", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{0, 16383},
				master("aaa", "10.0.0.1", 6379), replica("bbb", "10.0.0.2", 0, "online")))
		}, wantErr: "replica"},
		{name: "no host anywhere", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{0, 16383}, master("aaa", "", 6379)))
		}, wantErr: "no host"},
		{name: "no primary", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{0, 16383}, replica("bbb", "10.0.0.2", 6379, "online")))
		}, wantErr: "no node has role master"},
		{name: "two online primaries", reply: func(r3 bool) resp.Value {
			return tvArr(shardsEntry(r3, []int64{0, 16383},
				master("aaa", "10.0.0.1", 6379), master("bbb", "10.0.0.2", 6379)))
		}, wantErr: "2 nodes have role master"},
		{name: "unknown role", reply: func(r3 bool) resp.Value {
			m := master("aaa", "10.0.0.1", 6379)
			m.role = "arbiter"
			return tvArr(shardsEntry(r3, []int64{0, 16383}, m))
		}, wantErr: "unknown role"},
		{name: "no role", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("slots"), tvArr(tvInt(0), tvInt(1)), tvBulk("nodes"), tvArr(tvObj(r3,
				tvBulk("port"), tvInt(6379), tvBulk("ip"), tvBulk("10.0.0.1")))))
		}, wantErr: `no "role"`},
		{name: "ip not a string", reply: func(r3 bool) resp.Value {
			return tvArr(tvObj(r3, tvBulk("slots"), tvArr(tvInt(0), tvInt(1)), tvBulk("nodes"), tvArr(tvObj(r3,
				tvBulk("port"), tvInt(6379), tvBulk("ip"), tvArr(), tvBulk("role"), tvBulk("master")))))
		}, wantErr: "not a string"},
		{name: "overlap is left to Owners", reply: func(r3 bool) resp.Value {
			return tvArr(
				shardsEntry(r3, []int64{0, 100}, master("aaa", "10.0.0.1", 6379)),
				shardsEntry(r3, []int64{100, 200}, master("bbb", "10.0.0.2", 6379)))
		}, want: []route.Shard{
			{Ranges: [][2]int{{0, 100}}, Primary: "10.0.0.1:6379", PrimaryID: "aaa"},
			{Ranges: [][2]int{{100, 200}}, Primary: "10.0.0.2:6379", PrimaryID: "bbb"},
		}},
	}
}

func TestParseShards(t *testing.T) {
	for _, tt := range shardsCases() {
		for _, r3 := range []bool{false, true} {
			t.Run(tt.name+"/resp"+strconv.Itoa(map[bool]int{false: 2, true: 3}[r3]), func(t *testing.T) {
				got, err := route.ParseShards(tt.reply(r3), tt.fallback, tt.tls)
				checkParse(t, got, err, tt.want, tt.wantErr)
			})
		}
	}
}

func checkParse(t *testing.T, got []route.Shard, err error, want []route.Shard, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil {
			t.Fatalf("no error, want one containing %q; got %+v", wantErr, got)
		}
		if !errors.Is(err, route.ErrBadTopology) {
			t.Errorf("error %v does not wrap ErrBadTopology", err)
		}
		if !strings.Contains(err.Error(), wantErr) {
			t.Errorf("error %q does not contain %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if len(got) != 0 || len(want) != 0 {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got  %+v\nwant %+v", got, want)
		}
	}
}

// slotsNode renders a CLUSTER SLOTS node as Redis 7.0 does: host, port,
// id, and a map of networking metadata (a flat array in RESP2).
func slotsNode(resp3 bool, host resp.Value, port int64, id string, hostname string) resp.Value {
	meta := tvObj(resp3)
	if hostname != "" {
		meta = tvObj(resp3, tvBulk("hostname"), tvBulk(hostname))
	}
	return tvArr(host, tvInt(port), tvBulk(id), meta)
}

func slotsEntry(start, end int64, nodes ...resp.Value) resp.Value {
	return tvArr(append([]resp.Value{tvInt(start), tvInt(end)}, nodes...)...)
}

type slotsCase struct {
	name     string
	reply    func(resp3 bool) resp.Value
	fallback string
	want     []route.Shard
	wantErr  string
}

func slotsCases() []slotsCase {
	return []slotsCase{
		{
			name: "three shards",
			reply: func(r3 bool) resp.Value {
				return tvArr(
					slotsEntry(0, 5460,
						slotsNode(r3, tvBulk("127.0.0.1"), 7000, "aaa", ""),
						slotsNode(r3, tvBulk("127.0.0.1"), 7003, "ddd", "")),
					slotsEntry(5461, 10922,
						slotsNode(r3, tvBulk("127.0.0.1"), 7001, "bbb", "")),
					slotsEntry(10923, 16383,
						slotsNode(r3, tvBulk("127.0.0.1"), 7002, "ccc", "host-2"),
						slotsNode(r3, tvBulk("127.0.0.1"), 7005, "fff", "host-5")),
				)
			},
			want: []route.Shard{
				{Ranges: [][2]int{{0, 5460}}, Primary: "127.0.0.1:7000", PrimaryID: "aaa", Replicas: []string{"127.0.0.1:7003"}},
				{Ranges: [][2]int{{5461, 10922}}, Primary: "127.0.0.1:7001", PrimaryID: "bbb"},
				{Ranges: [][2]int{{10923, 16383}}, Primary: "127.0.0.1:7002", PrimaryID: "ccc", Replicas: []string{"127.0.0.1:7005"}},
			},
		},
		{
			name: "redis 3 shape without id or metadata",
			reply: func(bool) resp.Value {
				return tvArr(slotsEntry(0, 16383, tvArr(tvBulk("10.0.0.1"), tvInt(6379)), tvArr(tvBulk("10.0.0.2"), tvBulk("6380"))))
			},
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.0.0.1:6379", Replicas: []string{"10.0.0.2:6380"}}},
		},
		{
			name: "ranges of one primary merged",
			reply: func(r3 bool) resp.Value {
				return tvArr(
					slotsEntry(0, 99, slotsNode(r3, tvBulk("10.0.0.1"), 6379, "aaa", ""), slotsNode(r3, tvBulk("10.0.0.3"), 6379, "ccc", "")),
					slotsEntry(100, 199, slotsNode(r3, tvBulk("10.0.0.2"), 6379, "bbb", "")),
					slotsEntry(200, 299, slotsNode(r3, tvBulk("10.0.0.1"), 6379, "aaa", ""), slotsNode(r3, tvBulk("10.0.0.3"), 6379, "ccc", "")),
				)
			},
			want: []route.Shard{
				{Ranges: [][2]int{{0, 99}, {200, 299}}, Primary: "10.0.0.1:6379", PrimaryID: "aaa", Replicas: []string{"10.0.0.3:6379"}},
				{Ranges: [][2]int{{100, 199}}, Primary: "10.0.0.2:6379", PrimaryID: "bbb"},
			},
		},
		{
			name: "unknown hosts fall back",
			reply: func(r3 bool) resp.Value {
				return tvArr(slotsEntry(0, 16383,
					slotsNode(r3, tvBulk(""), 6379, "aaa", ""),
					slotsNode(r3, tvBulk("?"), 6380, "bbb", ""),
					slotsNode(r3, tvNull(), 6381, "ccc", "")))
			},
			fallback: "10.9.9.9",
			want:     []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.9.9.9:6379", PrimaryID: "aaa", Replicas: []string{"10.9.9.9:6380", "10.9.9.9:6381"}}},
		},
		{
			// "?" is a hostname endpoint without a hostname: the ip in the
			// metadata names the node. A null endpoint (unknown-endpoint)
			// means the host asked, whatever ip the metadata gives.
			name: "unknown hostname uses the metadata ip, null host the host asked",
			reply: func(r3 bool) resp.Value {
				return tvArr(slotsEntry(0, 16383,
					tvArr(tvBulk("?"), tvInt(6379), tvBulk("aaa"), tvObj(r3, tvBulk("ip"), tvBulk("10.0.0.1"))),
					tvArr(tvNull(), tvInt(6380), tvBulk("bbb"), tvObj(r3, tvBulk("ip"), tvBulk("172.17.0.3")))))
			},
			fallback: "lb.example",
			want:     []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.0.0.1:6379", PrimaryID: "aaa", Replicas: []string{"lb.example:6380"}}},
		},
		{
			name: "slots as strings",
			reply: func(r3 bool) resp.Value {
				return tvArr(tvArr(tvBulk("0"), tvBulk("16383"), slotsNode(r3, tvBulk("10.0.0.1"), 6379, "aaa", "")))
			},
			want: []route.Shard{{Ranges: [][2]int{{0, 16383}}, Primary: "10.0.0.1:6379", PrimaryID: "aaa"}},
		},
		{name: "empty", reply: func(bool) resp.Value { return tvArr() }},

		{name: "error reply", reply: func(bool) resp.Value {
			return resp.Value{Type: resp.SimpleError, Str: []byte("ERR This instance has cluster support disabled")}
		}, wantErr: "cluster support disabled"},
		{name: "map reply", reply: func(bool) resp.Value { return resp.Value{Type: resp.Map} }, wantErr: "not an array"},
		{name: "entry not an array", reply: func(bool) resp.Value { return tvArr(tvInt(0)) }, wantErr: "not an array"},
		{name: "entry too short", reply: func(bool) resp.Value { return tvArr(tvArr(tvInt(0), tvInt(1))) }, wantErr: "at least 3"},
		{name: "node too short", reply: func(bool) resp.Value {
			return tvArr(slotsEntry(0, 1, tvArr(tvBulk("10.0.0.1"))))
		}, wantErr: "at least 2"},
		{name: "node not an array", reply: func(bool) resp.Value {
			return tvArr(slotsEntry(0, 1, tvBulk("10.0.0.1:6379")))
		}, wantErr: "not an array"},
		{name: "port zero", reply: func(r3 bool) resp.Value {
			return tvArr(slotsEntry(0, 1, slotsNode(r3, tvBulk("10.0.0.1"), 0, "aaa", "")))
		}, wantErr: "port outside"},
		{name: "port negative", reply: func(r3 bool) resp.Value {
			return tvArr(slotsEntry(0, 1, slotsNode(r3, tvBulk("10.0.0.1"), -1, "aaa", "")))
		}, wantErr: "outside 0-65535"},
		{name: "port null", reply: func(bool) resp.Value {
			return tvArr(slotsEntry(0, 1, tvArr(tvBulk("10.0.0.1"), tvNull())))
		}, wantErr: "port outside"},
		{name: "replica port too big", reply: func(r3 bool) resp.Value {
			return tvArr(slotsEntry(0, 1, slotsNode(r3, tvBulk("10.0.0.1"), 6379, "aaa", ""), slotsNode(r3, tvBulk("10.0.0.2"), 1<<20, "bbb", "")))
		}, wantErr: "replica 0"},
		{name: "host not a string", reply: func(bool) resp.Value {
			return tvArr(slotsEntry(0, 1, tvArr(tvInt(10), tvInt(6379))))
		}, wantErr: "not a string"},
		{name: "no host anywhere", reply: func(r3 bool) resp.Value {
			return tvArr(slotsEntry(0, 1, slotsNode(r3, tvBulk(""), 6379, "aaa", "")))
		}, wantErr: "no host"},
		{name: "slot out of range", reply: func(r3 bool) resp.Value {
			return tvArr(slotsEntry(0, 16384, slotsNode(r3, tvBulk("10.0.0.1"), 6379, "aaa", "")))
		}, wantErr: "outside"},
		{name: "start after end", reply: func(r3 bool) resp.Value {
			return tvArr(slotsEntry(10, 9, slotsNode(r3, tvBulk("10.0.0.1"), 6379, "aaa", "")))
		}, wantErr: "after its end"},
		{name: "slot an array", reply: func(r3 bool) resp.Value {
			return tvArr(tvArr(tvArr(), tvInt(9), slotsNode(r3, tvBulk("10.0.0.1"), 6379, "aaa", "")))
		}, wantErr: "not an integer"},
		{name: "huge reply", reply: func(r3 bool) resp.Value {
			list := make([]resp.Value, route.Slots+1)
			for i := range list {
				list[i] = slotsEntry(0, 0, slotsNode(r3, tvBulk("10.0.0.1"), 6379, "aaa", ""))
			}
			return tvArr(list...)
		}, wantErr: "ranges"},
	}
}

func TestParseSlots(t *testing.T) {
	for _, tt := range slotsCases() {
		for _, r3 := range []bool{false, true} {
			t.Run(tt.name+"/resp"+strconv.Itoa(map[bool]int{false: 2, true: 3}[r3]), func(t *testing.T) {
				got, err := route.ParseSlots(tt.reply(r3), tt.fallback)
				checkParse(t, got, err, tt.want, tt.wantErr)
			})
		}
	}
}

func TestOwners(t *testing.T) {
	shards := wantThreeShards()
	shards = append(shards[:1], route.Shard{}, shards[1], shards[2]) // a slot-less shard at index 1
	owners, err := route.Owners(shards)
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[int]int16{0: 0, 5460: 0, 5461: 2, 10922: 2, 10923: 3, 16383: 3} {
		if owners[s] != want {
			t.Errorf("owner of slot %d = %d, want %d", s, owners[s], want)
		}
	}

	partial := []route.Shard{{Ranges: [][2]int{{10, 20}, {30, 30}}, Primary: "[::1]:6379"}}
	owners, err = route.Owners(partial)
	if err != nil {
		t.Fatal(err)
	}
	covered := 0
	for s, o := range owners {
		switch {
		case o == 0:
			covered++
		case o != -1:
			t.Fatalf("owner of slot %d = %d", s, o)
		}
	}
	if covered != 12 {
		t.Errorf("%d slots covered, want 12", covered)
	}

	owners, err = route.Owners(nil)
	if err != nil || owners[0] != -1 || owners[route.Slots-1] != -1 {
		t.Errorf("Owners(nil) = %v, %v", owners[0], err)
	}
}

func TestOwnersRejects(t *testing.T) {
	ok := func(ranges ...[2]int) route.Shard {
		return route.Shard{Ranges: ranges, Primary: "10.0.0.1:6379"}
	}
	withPrimary := func(addr string) route.Shard {
		return route.Shard{Ranges: [][2]int{{0, 1}}, Primary: addr}
	}
	withReplica := func(addr string) route.Shard {
		return route.Shard{Ranges: [][2]int{{0, 1}}, Primary: "10.0.0.1:6379", Replicas: []string{"10.0.0.2:6379", addr}}
	}
	tests := []struct {
		name    string
		shards  []route.Shard
		wantErr string
	}{
		{"start after end", []route.Shard{ok([2]int{5, 4})}, "after its end"},
		{"negative slot", []route.Shard{ok([2]int{-1, 4})}, "outside"},
		{"slot 16384", []route.Shard{ok([2]int{0, 16384})}, "outside"},
		{"overlap in a shard", []route.Shard{ok([2]int{0, 10}, [2]int{10, 20})}, "slot 10"},
		{"duplicate range", []route.Shard{ok([2]int{0, 10}, [2]int{0, 10})}, "slot 0"},
		{"overlap across shards", []route.Shard{ok([2]int{0, 10}), {}, ok([2]int{5, 20})}, "slot 5 is served by shard 0 (10.0.0.1:6379) and shard 2"},
		{"primary without port", []route.Shard{withPrimary("10.0.0.1")}, "not host:port"},
		{"primary port zero", []route.Shard{withPrimary("10.0.0.1:0")}, "port outside"},
		{"primary port too big", []route.Shard{withPrimary("10.0.0.1:65536")}, "port outside"},
		{"primary port signed", []route.Shard{withPrimary("10.0.0.1:+80")}, "port outside"},
		{"primary port empty", []route.Shard{withPrimary("10.0.0.1:")}, "port outside"},
		{"primary without host", []route.Shard{withPrimary(":6379")}, "no host"},
		{"primary empty", []route.Shard{withPrimary("")}, "not host:port"},
		{"primary bare ipv6", []route.Shard{withPrimary("::1:6379")}, "not host:port"},
		{"replica without port", []route.Shard{withReplica("10.0.0.3")}, "replica 1"},
		{"replica port zero", []route.Shard{withReplica("10.0.0.3:0")}, "replica 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owners, err := route.Owners(tt.shards)
			if err == nil {
				t.Fatalf("no error, want %q", tt.wantErr)
			}
			if owners != nil {
				t.Error("owners returned with an error")
			}
			if !errors.Is(err, route.ErrBadTopology) {
				t.Errorf("error %v does not wrap ErrBadTopology", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestParseThenOwners runs the parsed replies through Owners, as the
// cluster topology does.
func TestParseThenOwners(t *testing.T) {
	for _, r3 := range []bool{false, true} {
		shards, err := route.ParseShards(threeShards(r3), "", false)
		if err != nil {
			t.Fatal(err)
		}
		owners, err := route.Owners(shards)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"foo", "bar", "{user1000}.following"} {
			s := route.Slot(key)
			sh := shards[owners[s]]
			if s < sh.Ranges[0][0] || s > sh.Ranges[0][1] {
				t.Errorf("key %q slot %d routed to shard %+v", key, s, sh)
			}
		}
	}
}
