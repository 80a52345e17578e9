package respire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// TestConnectTopologyRejectsBadOptions: contradictory or incomplete
// topology options fail Connect with a *ConfigError naming the option,
// before any I/O.
func TestConnectTopologyRejectsBadOptions(t *testing.T) {
	seeds := []string{"127.0.0.1:1"}
	cases := []struct {
		name  string
		opts  Options
		field string
	}{
		{"SentinelAndCluster", Options{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: seeds}, Cluster: &ClusterOptions{}}, "Options.Sentinel"},
		{"EmptySeeds", Options{Cluster: &ClusterOptions{}}, "Options.Endpoints"},
		{"SentinelNoName", Options{Sentinel: &SentinelOptions{Addrs: seeds}}, "Options.Sentinel.PrimaryName"},
		{"SentinelNoAddrs", Options{Sentinel: &SentinelOptions{PrimaryName: "p"}}, "Options.Sentinel.Addrs"},
		{"SentinelBadAddr", Options{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{"nohost"}}}, "Options.Sentinel.Addrs[0]"},
		{"SentinelWithEndpoints", Options{Endpoints: seeds, Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: seeds}}, "Options.Endpoints"},
		{"ReplicaReadsStandalone", Options{Endpoints: seeds, ReadFrom: ReadReplica}, "Options.ReadFrom"},
		{"UnknownReadPolicy", Options{Endpoints: seeds, Cluster: &ClusterOptions{}, ReadFrom: 9}, "Options.ReadFrom"},
		{"MaxRedirects", Options{Endpoints: seeds, Cluster: &ClusterOptions{MaxRedirects: 101}}, "Options.Cluster.MaxRedirects"},
		{"RefreshInterval", Options{Endpoints: seeds, Cluster: &ClusterOptions{RefreshInterval: time.Millisecond}}, "Options.Cluster.RefreshInterval"},
		{"ClusterDB", Options{Endpoints: seeds, Cluster: &ClusterOptions{}, DB: 1}, "Options.DB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Connect(context.Background(), tc.opts)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field {
				if c != nil {
					_ = c.Close()
				}
				t.Fatalf("Connect = %v, want a *ConfigError for %s", err, tc.field)
			}
		})
	}
}

// TestConnectTopologyFailsOnWrongServers: a primary name no sentinel
// knows and a seed that is not in cluster mode fail Connect with an error
// naming the option (the seed's reply reachable as a *ServerError);
// nothing stays open (TestMain checks goroutines).
func TestConnectTopologyFailsOnWrongServers(t *testing.T) {
	ctx := testCtx(t)
	_, err := Connect(ctx, Options{Sentinel: &SentinelOptions{PrimaryName: "no-such-primary", Addrs: testenv.SentinelAddrs(t)}})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "Options.Sentinel.PrimaryName" {
		t.Errorf("unknown primary: err = %v, want a *ConfigError for Options.Sentinel.PrimaryName", err)
	}
	// A sentinel that did not answer may know the name: the failure is
	// the connection's, not the configuration's.
	_, err = Connect(ctx, Options{Sentinel: &SentinelOptions{PrimaryName: "no-such-primary",
		Addrs: append([]string{"127.0.0.1:1"}, testenv.SentinelAddrs(t)...)}, DialTimeout: 200 * time.Millisecond})
	var ne *ConnError
	if errors.As(err, &ce) || !errors.As(err, &ne) || !ne.Unwritten || errors.Is(err, ErrInvalidConfig) {
		t.Errorf("unknown primary, one sentinel unreachable: err = %v, want a *ConnError, not a *ConfigError", err)
	}
	_, err = Connect(ctx, Options{Endpoints: []string{standaloneAddr(t)}, Cluster: &ClusterOptions{}})
	if !errors.As(err, &ce) || ce.Field != "Options.Cluster" {
		t.Errorf("standalone seed: err = %v, want a *ConfigError for Options.Cluster", err)
	}
	// As for a Sentinel address that is not a sentinel, the server's
	// reply is reachable.
	if se := (*ServerError)(nil); !errors.As(err, &se) || !strings.Contains(se.Message, "cluster support disabled") {
		t.Errorf("standalone seed: err = %v, want the server's reply as a *ServerError", err)
	}
	_, err = Connect(ctx, Options{Endpoints: []string{"127.0.0.1:1"}, Cluster: &ClusterOptions{}, DialTimeout: 200 * time.Millisecond})
	if !errors.As(err, &ne) {
		t.Errorf("unreachable seed: err = %v, want a *ConnError", err)
	}
}

// TestConnectSentinelNotASentinel: a Sentinel client pointed at a server
// that is not a sentinel fails Connect with a *ConfigError for
// Options.Sentinel.Addrs that says discovery failed and gives every
// sentinel's reason, with the server's reply reachable as a *ServerError;
// it does not claim a connection was lost.
func TestConnectSentinelNotASentinel(t *testing.T) {
	ctx := testCtx(t)
	standalone := standaloneAddr(t)
	down := freeAddr(t)
	for _, addrs := range [][]string{{standalone}, {down, standalone}} {
		_, err := Connect(ctx, Options{Sentinel: &SentinelOptions{PrimaryName: "respire-primary", Addrs: addrs},
			DialTimeout: time.Second})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "Options.Sentinel.Addrs" {
			t.Errorf("sentinels %v: err = %v, want a *ConfigError for Options.Sentinel.Addrs", addrs, err)
			continue
		}
		msg := err.Error()
		for _, want := range append([]string{"discovery failed", "is not a sentinel", "unknown command"}, addrs...) {
			if !strings.Contains(msg, want) {
				t.Errorf("sentinels %v: err = %q, want it to contain %q", addrs, msg, want)
			}
		}
		if errors.Is(err, ErrConnectionLost) || strings.Contains(msg, "connection lost") {
			t.Errorf("sentinels %v: err = %q, want no connection loss", addrs, msg)
		}
		var se *ServerError
		if !errors.As(err, &se) || se.Code != "ERR" || !strings.HasPrefix(se.Command, "SENTINEL") {
			t.Errorf("sentinels %v: err = %v, want the SENTINEL command's *ServerError reachable", addrs, err)
		}
		if MayHaveExecuted(err) {
			t.Errorf("sentinels %v: MayHaveExecuted = true for a configuration error", addrs)
		}
	}
}

func TestParseURLTopologies(t *testing.T) {
	o, err := ParseURL("redis+sentinel://u:pw@10.0.0.1,10.0.0.2:26400/mymaster/2?sentinel_password=sp&read_from=replica")
	if err != nil {
		t.Fatal(err)
	}
	s := o.Sentinel
	if s == nil || s.PrimaryName != "mymaster" || fmt.Sprint(s.Addrs) != "[10.0.0.1:26379 10.0.0.2:26400]" ||
		s.Password != "sp" || o.Password != "pw" || o.Username != "u" || o.DB != 2 || o.ReadFrom != ReadReplica || len(o.Endpoints) != 0 {
		t.Errorf("sentinel URL: %+v %+v", o, s)
	}
	// A '/' in the primary's name is percent-encoded: it stays in the
	// name, while an unencoded one starts the database.
	for url, want := range map[string]struct {
		name string
		db   int
	}{
		"redis+sentinel://h/my%2Fmaster":        {"my/master", 0},
		"redis+sentinel://h/my%2Fmaster/2":      {"my/master", 2},
		"redis+sentinel://h/my%2fmaster%2F/3":   {"my/master/", 3},
		"redis+sentinel://h/%2Fp%3Fq%25r%20s/1": {"/p?q%r s", 1},
		"redis+sentinel://h/my%2Fma ster/4":     {"my/ma ster", 4},
	} {
		o, err := ParseURL(url)
		if err != nil || o.Sentinel == nil || o.Sentinel.PrimaryName != want.name || o.DB != want.db {
			t.Errorf("ParseURL(%q) = %+v, %v; want name %q, DB %d", url, o.Sentinel, err, want.name, want.db)
		}
	}
	o, err = ParseURL("rediss+cluster://a:7000,b,[::1]:7002?read_from=replica-preferred")
	if err != nil {
		t.Fatal(err)
	}
	if o.Cluster == nil || fmt.Sprint(o.Endpoints) != "[a:7000 b:6379 [::1]:7002]" || o.TLS == nil || o.ReadFrom != ReadReplicaPreferred {
		t.Errorf("cluster URL: %+v", o)
	}
	for _, bad := range []string{
		"redis://a:1,b:2",              // several hosts without a topology
		"redis+sentinel://a:1",         // no primary name
		"redis+sentinel://a:1/m/2%2F3", // an encoded '/' in the database
		"redis://a:1/2%2F3",
		"redis+cluster://a:1/3",    // a cluster has database 0 only
		"redis+cluster://a:1,,b:2", // empty host
		"redis://a:1?sentinel_password=x",
		"redis+cluster://a:1?read_from=nearest",
	} {
		if _, err := ParseURL(bad); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("ParseURL(%q) = %v, want ErrInvalidConfig", bad, err)
		}
	}
}

// proxiedCluster connects a Cluster client whose every primary is reached
// through a fault proxy (the replicas are seeds and are dialed directly).
func proxiedCluster(t *testing.T, opts Options) (*Client, map[string]*respiretest.Proxy) {
	return proxiedClusterNodes(t, opts, false)
}

// proxiedClusterNodes is proxiedCluster, with the replicas behind proxies
// too when all is set.
func proxiedClusterNodes(t *testing.T, opts Options, all bool) (*Client, map[string]*respiretest.Proxy) {
	t.Helper()
	primaries, replicas := clusterRoles(t)
	via := map[string]string{}
	proxies := map[string]*respiretest.Proxy{}
	nodes := primaries
	if all {
		nodes = append(slices.Clone(primaries), replicas...)
	}
	for _, p := range nodes {
		px := realProxy(t, p)
		via[p] = px.Addr()
		proxies[p] = px
	}
	opts.Endpoints = replicas
	proxied := rewriteDialer(via)
	if own := opts.Dialer; own != nil {
		// The test's own dialer serves every address without a proxy.
		opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if _, ok := via[addr]; ok {
				return proxied(ctx, network, addr)
			}
			return own(ctx, network, addr)
		}
	} else {
		opts.Dialer = proxied
	}
	return clusterClient(t, opts), proxies
}

// keyOn returns a key of the test whose slot node serves, and the slot.
func keyOn(t *testing.T, c *Client, node string) (string, int) {
	t.Helper()
	for i := 0; ; i++ {
		k := keyPrefix(t) + strconv.Itoa(i)
		n, err := c.topo.Pick(route.Slot(k), false)
		if err != nil {
			t.Fatal(err)
		}
		if n.Addr == node {
			return k, route.Slot(k)
		}
	}
}

// TestClusterRedirects: MOVED updates the map and redirects; ASK sends
// ASKING with the command in one frame to the target for that command
// only; a redirect loop ends with ErrRedirectLoop after MaxRedirects; an
// unparseable redirect is an error for that call, said on one line. None
// counts as a retry attempt.
func TestClusterRedirects(t *testing.T) {
	countsCommands(t)
	c, proxies := proxiedCluster(t, Options{RetryPolicy: &RetryPolicy{MaxAttempts: 3}, Cluster: &ClusterOptions{MaxRedirects: 4}})
	ctx := testCtx(t)
	primaries := c.topo.Primaries()
	a, b := primaries[0].Addr, primaries[1].Addr
	k, slot := keyOn(t, c, a)
	if err := c.Set(ctx, k, "v"); err != nil {
		t.Fatal(err)
	}

	t.Run("AskThenMovedBack", func(t *testing.T) {
		// a says ASK b; b, not importing, answers MOVED a even after
		// ASKING: the call ends at a, which serves it.
		rule := proxies[a].MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.Ask(slot, b))})
		defer rule.Remove()
		asking := commandCalls(t, b, "asking")
		v, err := c.Get(ctx, k)
		if err != nil || v != "v" {
			t.Fatalf("GET = %q, %v", v, err)
		}
		if got := commandCalls(t, b, "asking") - asking; got != 1 {
			t.Errorf("b ran ASKING %d times, want 1", got)
		}
		if got := proxies[b].Forwarded("ASKING"); got != 1 {
			t.Errorf("proxy of b forwarded ASKING %d times, want 1", got)
		}
		if n, _ := c.topo.Pick(slot, false); n.Addr != a {
			t.Errorf("after ASK the slot is routed to %s, want %s (ASK changes nothing)", n.Addr, a)
		}
	})
	t.Run("RedirectLoop", func(t *testing.T) {
		rule := proxies[a].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.Inject(respiretest.Moved(slot, a))})
		defer rule.Remove()
		before := proxies[a].Forwarded("GET") + rule.Applied()
		_, err := c.Get(ctx, k)
		if !errors.Is(err, ErrRedirectLoop) || MayHaveExecuted(err) {
			t.Fatalf("err = %v, want ErrRedirectLoop, not executed", err)
		}
		// One line, "respire:" once, ending with the last redirect.
		if want := "respire: GET (slot " + strconv.Itoa(slot) + "): too many cluster redirects; last redirect: " + respiretest.Moved(slot, a); err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
		var re *RetryError
		if errors.As(err, &re) {
			t.Errorf("err = %v: redirects must not count as retry attempts", err)
		}
		if got := proxies[a].Forwarded("GET") + rule.Applied() - before; got != 5 {
			t.Errorf("a received %d GETs, want 5 (the first and 4 redirects)", got)
		}
	})
	t.Run("BadRedirect", func(t *testing.T) {
		rule := proxies[a].MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject("MOVED 99999 nowhere")})
		defer rule.Remove()
		_, err := c.Get(ctx, k)
		if !errors.Is(err, ErrProtocol) {
			t.Fatalf("err = %v, want ErrProtocol", err)
		}
		if s := err.Error(); strings.Contains(s, "\n") || !strings.Contains(s, `: protocol error: route: malformed redirect: `) || strings.Count(s, "MOVED 99999 nowhere") != 1 {
			t.Errorf("err = %q, want one line saying protocol error, then the malformed redirect once", s)
		}
		if v, err := c.Get(ctx, k); err != nil || v != "v" {
			t.Fatalf("next GET = %q, %v", v, err)
		}
	})
	t.Run("MovedUpdatesMap", func(t *testing.T) {
		// a claims the slot moved to b: the client believes it until b
		// (which does not own it) sends it back, and the refresh fixes
		// the map either way.
		rule := proxies[a].MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.Moved(slot, b))})
		defer rule.Remove()
		if v, err := c.Get(ctx, k); err != nil || v != "v" {
			t.Fatalf("GET = %q, %v", v, err)
		}
		if got := proxies[b].Forwarded("GET"); got < 1 {
			t.Errorf("b received %d GETs, want the redirected one", got)
		}
	})
}

// TestClusterHostileMapKeepsPreviousMap: a CLUSTER SHARDS reply with
// overlapping ranges, a slot past 16383, a port 0, an unknown shape or no
// slot served at all is rejected and the previous map stays in use.
func TestClusterHostileMapKeepsPreviousMap(t *testing.T) {
	c, proxies := proxiedClusterNodes(t, Options{}, true)
	ctx := testCtx(t)
	node := func(port int64) resp.Value {
		return resp.Value{Type: resp.Array, Elems: []resp.Value{
			bulk("id"), bulk("x"), bulk("port"), {Type: resp.Integer, Int: port}, bulk("ip"), bulk("127.0.0.1"),
			bulk("role"), bulk("master"), bulk("health"), bulk("online")}}
	}
	shard := func(port int64, ranges ...int64) resp.Value {
		var sl []resp.Value
		for _, r := range ranges {
			sl = append(sl, resp.Value{Type: resp.Integer, Int: r})
		}
		return resp.Value{Type: resp.Array, Elems: []resp.Value{bulk("slots"), {Type: resp.Array, Elems: sl},
			bulk("nodes"), {Type: resp.Array, Elems: []resp.Value{node(port)}}}}
	}
	hostile := map[string]resp.Value{
		"Overlap":    {Type: resp.Array, Elems: []resp.Value{shard(7000, 0, 9000), shard(7001, 8000, 16383)}},
		"PastEnd":    {Type: resp.Array, Elems: []resp.Value{shard(7000, 0, 16384)}},
		"Port0":      {Type: resp.Array, Elems: []resp.Value{shard(0, 0, 16383)}},
		"NotAnArray": bulk("nonsense"),
		// A node not (yet) joined to the cluster serves no slot.
		"NoShards": {Type: resp.Array},
		"NoSlots":  {Type: resp.Array, Elems: []resp.Value{shard(7000)}},
	}
	before := fmt.Sprint(addrs(c.topo.Primaries()))
	for name, v := range hostile {
		t.Run(name, func(t *testing.T) {
			for _, px := range proxies {
				r := px.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Times: respiretest.Always, Action: respiretest.Reply(encode(v))})
				defer r.Remove()
			}
			if err := c.topo.Refresh(ctx, true); !errors.Is(err, route.ErrBadTopology) {
				t.Errorf("refresh = %v, want ErrBadTopology", err)
			}
			if got := fmt.Sprint(addrs(c.topo.Primaries())); got != before {
				t.Errorf("primaries = %s, want the previous %s", got, before)
			}
			k := keyPrefix(t) + "k"
			if err := c.Set(ctx, k, "v"); err != nil {
				t.Errorf("SET after a rejected map: %v", err)
			}
			_, _ = c.Del(ctx, k)
		})
	}
}

func bulk(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }

func encode(v resp.Value) []byte { return resp.AppendValue(nil, v, 2) }

// addrs returns the sorted addresses of ns.
func addrs(ns []*route.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Addr)
	}
	slices.Sort(out)
	return out
}

// TestClusterMultiKey: cross-slot commands fail before any I/O, except the
// split ones, whose replies come back in key order; keyless commands
// reach every primary where that is their meaning.
func TestClusterMultiKey(t *testing.T) {
	c, proxies := proxiedCluster(t, Options{})
	ctx := testCtx(t)
	p := keyPrefix(t)
	k1, k2 := p+"a", p+"b"
	if route.Slot(k1) == route.Slot(k2) {
		t.Fatal("test keys share a slot")
	}
	sent := func() int {
		n := 0
		for _, px := range proxies {
			n += px.Forwarded("SUNION")
		}
		return n
	}
	_, err := c.Do(ctx, NewCommand("SUNION"), k1, k2)
	if !errors.Is(err, ErrCrossSlot) || !errors.Is(err, ErrInvalidArgument) || MayHaveExecuted(err) {
		t.Errorf("SUNION across slots: err = %v, want ErrCrossSlot before I/O", err)
	}
	if sent() != 0 {
		t.Errorf("SUNION reached a server")
	}
	// Hash tags put keys in one slot: no error.
	if _, err := c.Do(ctx, NewCommand("SUNION"), p+"{t}a", p+"{t}b"); err != nil {
		t.Errorf("SUNION with a hash tag: %v", err)
	}
	var keys, pairs []string
	for i := range 40 {
		k := p + strconv.Itoa(i)
		keys = append(keys, k)
		pairs = append(pairs, k, "v"+strconv.Itoa(i))
	}
	if err := c.MSet(ctx, pairs...); err != nil {
		t.Fatalf("MSET: %v", err)
	}
	vals, found, err := c.MGet(ctx, append(keys, p+"missing")...)
	if err != nil {
		t.Fatalf("MGET: %v", err)
	}
	for i := range keys {
		if !found[i] || vals[i] != "v"+strconv.Itoa(i) {
			t.Fatalf("MGET[%d] = %q, %v", i, vals[i], found[i])
		}
	}
	if found[len(keys)] {
		t.Errorf("MGET of a missing key found it")
	}
	r, err := c.Do(ctx, NewCommand("MGET"), keys[3], keys[1])
	if s, _ := r.Strings(); err != nil || fmt.Sprint(s) != "[v3 v1]" {
		t.Errorf("raw MGET = %v, %v", s, err)
	}
	var size int64
	for _, n := range c.topo.Primaries() {
		size += admin(t, n.Addr, "DBSIZE").v.Int
	}
	r, err = c.Do(ctx, NewCommand("DBSIZE"))
	if n, _ := r.Int64(); err != nil || n != size {
		t.Errorf("DBSIZE = %d, %v; the primaries hold %d", n, err, size)
	}
	r, err = c.Do(ctx, NewCommand("KEYS"), escapeGlob(p)+"*")
	if ks, _ := r.Strings(); err != nil || len(ks) != len(keys) {
		t.Errorf("KEYS found %d, %v; want %d", len(ks), err, len(keys))
	}
	n, err := c.Del(ctx, append(keys, p+"missing")...)
	if err != nil || n != int64(len(keys)) {
		t.Errorf("DEL = %d, %v; want %d", n, err, len(keys))
	}
}

// TestMayHaveExecutedRetriedRouteError: a retried call whose last attempt
// could not be routed may still have run in an earlier attempt.
func TestMayHaveExecutedRetriedRouteError(t *testing.T) {
	route := &RouteError{Command: "INCR", Slot: 1, Err: ErrRedirectLoop}
	if MayHaveExecuted(route) {
		t.Errorf("a routing failure alone ran nothing")
	}
	if !MayHaveExecuted(&RetryError{Command: "INCR", Attempts: 2, ran: true, Err: route}) {
		t.Errorf("an earlier attempt may have run: MayHaveExecuted must say so")
	}
	if got := route.Error(); strings.Count(got, "respire:") != 1 {
		t.Errorf("Error() = %q: one prefix", got)
	}
}

// TestClusterSeedsSkipANonClusterSeed: one wrong seed among good ones does
// not fail Connect.
func TestClusterSeedsSkipANonClusterSeed(t *testing.T) {
	c := clusterClient(t, Options{Endpoints: append([]string{standaloneAddr(t)}, testenv.ClusterAddrs(t)[0])})
	if err := c.Set(testCtx(t), keyPrefix(t)+"k", "v"); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Del(testCtx(t), keyPrefix(t)+"k")
}

// TestKeySlotMovableKeys: commands whose keys follow a numkeys argument
// route by those keys: MSETEX's keys are every other argument after
// numkeys, its values and options never count.
func TestKeySlotMovableKeys(t *testing.T) {
	words := func(ws ...string) [][]byte {
		out := make([][]byte, len(ws))
		for i, w := range ws {
			out[i] = []byte(w)
		}
		return out
	}
	a, b := "{tag}a", "{tag}b"
	slot := route.Slot(a)
	other := "x"
	for route.Slot(other) == slot {
		other += "x"
	}
	tests := []struct {
		name      string
		cmd       catalog.Command
		args      [][]byte
		slot      int
		wantCross bool
	}{
		{"one slot", catalog.String.MSETEX(), words("MSETEX", "2", a, other, b, other, "PX", "100"), slot, false},
		{"values ignored", catalog.String.MSETEX(), words("MSETEX", "1", a, other), slot, false},
		{"cross slot", catalog.String.MSETEX(), words("MSETEX", "2", a, "v", other, "v"), slot, true},
		{"ZINTERCARD", catalog.SortedSet.ZINTERCARD(), words("ZINTERCARD", "2", a, b, "LIMIT", other), slot, false},
		// A numkeys beyond the arguments is the server's to reject (as
		// its COMMAND GETKEYS does): such arguments route as no key,
		// never as a cross-slot error about keys that are not keys.
		{"EVAL numkeys beyond the arguments", catalog.Scripting.EVAL(), words("EVAL", "return 1", "3", a, other), -1, false},
		{"EVAL numkeys huge", catalog.Scripting.EVAL(), words("EVAL", "return 1", "99999999999999999999", a, other), -1, false},
		{"EVAL negative numkeys", catalog.Scripting.EVAL(), words("EVAL", "return 1", "-1", a, other), -1, false},
		{"EVAL all arguments keys", catalog.Scripting.EVAL(), words("EVAL", "return 1", "2", a, b), slot, false},
		{"ZUNIONSTORE numkeys beyond the arguments", catalog.SortedSet.ZUNIONSTORE(), words("ZUNIONSTORE", a, "3", b, other), slot, false},
		{"MSETEX numkeys beyond the pairs", catalog.String.MSETEX(), words("MSETEX", "2", a, "v", other), -1, false},
		// The server skips the options' arguments to find STREAMS: a
		// group or a consumer may be named "streams".
		{"XREADGROUP group streams", catalog.Stream.XREADGROUP(), words("XREADGROUP", "GROUP", "streams", other, "STREAMS", a, ">"), slot, false},
		{"XREADGROUP consumer streams", catalog.Stream.XREADGROUP(), words("XREADGROUP", "GROUP", other, "STREAMS", "COUNT", "1", "STREAMS", a, b, ">", ">"), slot, false},
		{"XREAD", catalog.Stream.XREAD(), words("XREAD", "COUNT", "2", "BLOCK", "0", "STREAMS", a, b, "0", "0"), slot, false},
		{"XREAD cross slot", catalog.Stream.XREAD(), words("XREAD", "STREAMS", a, other, "0", "0"), slot, true},
		// A destination after STORE is a key; the patterns of BY and GET
		// are not, and the last STORE is the one that counts.
		{"SORT STORE", catalog.Generic.SORT(), words("SORT", a, "BY", "store", "GET", other, "STORE", b), slot, false},
		{"SORT STORE cross slot", catalog.Generic.SORT(), words("SORT", a, "LIMIT", "0", "1", "STORE", other), slot, true},
		{"SORT last STORE", catalog.Generic.SORT(), words("SORT", a, "STORE", other, "STORE", b), slot, false},
		{"GEORADIUS STORE cross slot", catalog.Geo.GEORADIUS(), words("GEORADIUS", a, "15", "37", "200", "km", "STORE", other), slot, true},
		// GEORADIUS's options follow its unit (the server's COMMAND
		// GETKEYS agrees): a unit spelled "store" names no key.
		{"GEORADIUS unit is not an option", catalog.Geo.GEORADIUS(), words("GEORADIUS", a, "15", "37", "200", "STORE", other), slot, false},
		{"GEORADIUSBYMEMBER STOREDIST", catalog.Geo.GEORADIUSBYMEMBER(), words("GEORADIUSBYMEMBER", a, "store", "200", "km", "STOREDIST", b), slot, false},
		{"GEORADIUSBYMEMBER STOREDIST cross slot", catalog.Geo.GEORADIUSBYMEMBER(), words("GEORADIUSBYMEMBER", a, "m", "200", "km", "STOREDIST", other), slot, true},
		// MIGRATE's keys follow KEYS when the key argument is empty.
		{"MIGRATE KEYS", catalog.Generic.MIGRATE(), words("MIGRATE", "127.0.0.1", "1", "", "0", "100", "AUTH", "keys", "KEYS", a, b), slot, false},
		{"MIGRATE KEYS cross slot", catalog.Generic.MIGRATE(), words("MIGRATE", "127.0.0.1", "1", "", "0", "100", "COPY", "KEYS", a, other), slot, true},
		// A key argument besides KEYS is the server's to reject (its
		// COMMAND GETKEYS refuses the arguments): no key, never a
		// cross-slot error about the keys after KEYS.
		{"MIGRATE key and KEYS", catalog.Generic.MIGRATE(), words("MIGRATE", "127.0.0.1", "1", a, "0", "100", "KEYS", a, other), -1, false},
		// Arguments the server refuses by their count before it looks
		// for keys route as no key: its arity error answers, never a
		// cross-slot error about an argument that is not a key.
		{"RENAME wrong arity", catalog.Generic.RENAME(), words("RENAME", a, other, "x"), -1, false},
		{"SMOVE too few", catalog.Set.SMOVE(), words("SMOVE", a, other), -1, false},
		{"BLMOVE wrong arity", catalog.List.BLMOVE(), words("BLMOVE", a, other, "LEFT", "LEFT"), -1, false},
		{"RENAME", catalog.Generic.RENAME(), words("RENAME", a, b), slot, false},
		{"MIGRATE one key", catalog.Generic.MIGRATE(), words("MIGRATE", "127.0.0.1", "1", a, "0", "100", "REPLACE"), slot, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cross := keySlot(tt.cmd, tt.args)
			if got != tt.slot || cross != tt.wantCross {
				t.Errorf("keySlot = %d, %v; want %d, %v", got, cross, tt.slot, tt.wantCross)
			}
		})
	}
}

// TestClusterSplitDoReplies: a multi-key command split across slots
// answers Client.Do as one command would: DEL, EXISTS, TOUCH and UNLINK
// with the summed integer, MSET with OK, on both protocols.
func TestClusterSplitDoReplies(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			c := clusterClient(t, Options{Protocol: proto})
			ctx := testCtx(t)
			p := "htopo:" + keyPrefix(t)
			a, b := p+"a", p+"b"
			if route.Slot(a) == route.Slot(b) {
				t.Fatal("test keys share a slot")
			}
			t.Cleanup(func() { _, _ = c.Del(context.Background(), a, b) })
			r, err := c.Do(ctx, catalog.String.MSET(), a, "1", b, "2")
			if s, _ := r.String(); err != nil || s != "OK" {
				t.Errorf("MSET = %v, %v; want OK", r.Value(), err)
			}
			for _, tt := range []struct {
				cmd  catalog.Command
				want int64
			}{
				{catalog.Generic.EXISTS(), 2},
				{catalog.Generic.TOUCH(), 2},
				{catalog.Generic.DEL(), 2},
				{catalog.Generic.UNLINK(), 0},
			} {
				r, err := c.Do(ctx, tt.cmd, a, b, p+"missing")
				if n, nerr := r.Int64(); err != nil || nerr != nil || n != tt.want {
					t.Errorf("%s = %v, %v; want %d", tt.cmd.FullName(), r.Value(), err, tt.want)
				}
			}
		})
	}
}

// TestClusterFanOutNamedByArgument: a command for every primary reaches
// every primary however its subcommand is given: NewCommand("SCRIPT")
// with "LOAD" as its first argument fans out like NewCommand("SCRIPT
// LOAD") and the catalog's descriptor.
func TestClusterFanOutNamedByArgument(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	// A script no server has seen, so that only this load can make it known.
	src := "return 'htopo " + runID + " " + strconv.FormatInt(time.Now().UnixNano(), 36) + "'"
	r, err := c.Do(ctx, NewCommand("SCRIPT"), "LOAD", src)
	if err != nil {
		t.Fatalf("SCRIPT LOAD = %v", err)
	}
	sha, _ := r.String()
	for _, n := range c.topo.Primaries() {
		if got := admin(t, n.Addr, "SCRIPT", "EXISTS", sha).Value(); len(got.Elems) != 1 || got.Elems[0].Int != 1 {
			t.Errorf("primary %s: SCRIPT EXISTS = %v, want the loaded script", n.Addr, got)
		}
	}
}

// TestClusterSlotOperandRoutes: CLUSTER COUNTKEYSINSLOT and GETKEYSINSLOT
// take no key but a slot, and a node answers them from its own keys only,
// without redirecting: they go to the slot's owner (in a batch too), so a
// slot another primary serves is not silently answered 0 and empty. A
// slot that is not one is the server's to reject.
func TestClusterSlotOperandRoutes(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	first, err := c.topo.Pick(0, false)
	if err != nil {
		t.Fatal(err)
	}
	// A slot of another primary than slot 0's, holding no key yet: a key
	// another test (or an earlier run) left there would be counted too.
	k := keyPrefix(t) + "k"
	for {
		n, err := c.topo.Pick(route.Slot(k), false)
		if err != nil {
			t.Fatal(err)
		}
		if n != first {
			held, err := admin(t, n.Addr, "CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(route.Slot(k))).Int64()
			if err != nil {
				t.Fatal(err)
			}
			if held == 0 {
				break
			}
		}
		k += "x"
	}
	slot := strconv.Itoa(route.Slot(k))
	if err := c.Set(ctx, k, "v"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Del(context.Background(), k) })
	check := func(how string, count, keys Reply) {
		t.Helper()
		if n, err := count.Int64(); err != nil || n != 1 {
			t.Errorf("%s: CLUSTER COUNTKEYSINSLOT %s = %v, %v; want 1", how, slot, count.Value(), err)
		}
		if ks, err := keys.Strings(); err != nil || !slices.Equal(ks, []string{k}) {
			t.Errorf("%s: CLUSTER GETKEYSINSLOT %s = %v, %v; want [%s]", how, slot, ks, err, k)
		}
	}
	count, err := c.Do(ctx, catalog.Cluster.CLUSTER_COUNTKEYSINSLOT(), slot)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := c.Do(ctx, NewCommand("CLUSTER"), "GETKEYSINSLOT", slot, 10)
	if err != nil {
		t.Fatal(err)
	}
	check("Do", count, keys)

	b := c.NewBatch()
	fc := b.Do(catalog.Cluster.CLUSTER_COUNTKEYSINSLOT(), slot)
	fk := b.Do(catalog.Cluster.CLUSTER_GETKEYSINSLOT(), slot, 10)
	if err := b.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	count, _ = fc.Result()
	keys, _ = fk.Result()
	check("Batch", count, keys)

	if _, err := c.Do(ctx, catalog.Cluster.CLUSTER_COUNTKEYSINSLOT(), "16384"); !errors.As(err, new(*ServerError)) {
		t.Errorf("CLUSTER COUNTKEYSINSLOT 16384 = %v; want the server's error", err)
	}
}
