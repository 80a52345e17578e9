package respire

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
)

// TestIntegerRepliesRefuseNonIntegralDoubles answers integer commands (DECR, Reply.Int64)
// with RESP3 doubles: an integral one converts, and 1.5, NaN, ±Inf and
// doubles beyond int64 fail with ErrUnexpectedReply, as their RESP2 text
// does, instead of being truncated to a wrong integer.
func TestIntegerRepliesRefuseNonIntegralDoubles(t *testing.T) {
	c, srv := hostileClient(t, 3)
	tests := []struct {
		reply float64
		want  int64
		ok    bool
	}{
		{3, 3, true},
		{-2, -2, true},
		{1.5, 0, false},
		{math.NaN(), 0, false},
		{math.Inf(1), 0, false},
		{math.Inf(-1), 0, false},
		{-1e19, 0, false},
		{1e19, 0, false},
	}
	for _, tt := range tests {
		reply := resp.Value{Type: resp.Double, Float: tt.reply}
		srv.load([]resp.Value{reply})
		got, err := c.Decr(context.Background(), "k")
		if tt.ok && (err != nil || got != tt.want) {
			t.Errorf("Decr answered %v = %d, %v; want %d", tt.reply, got, err, tt.want)
		}
		if !tt.ok && !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("Decr answered %v = %d, %v; want an error matching ErrUnexpectedReply", tt.reply, got, err)
		}
		n, err := Reply{v: reply}.Int64()
		if tt.ok && (err != nil || n != tt.want) {
			t.Errorf("Reply(%v).Int64() = %d, %v; want %d", tt.reply, n, err, tt.want)
		}
		if !tt.ok && !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("Reply(%v).Int64() = %d, %v; want an error matching ErrUnexpectedReply", tt.reply, n, err)
		}
	}
}

// TestIncrByConvertsAsItsBatchMember answers INCRBY, from a Client and
// from a batch, with an integer spelled as a bulk string, a simple string
// and an integral double, and with a non-integral one: the batch member
// refuses each with ErrUnexpectedReply, as the Client method does, and
// both take an integer.
func TestIncrByConvertsAsItsBatchMember(t *testing.T) {
	c, srv := hostileClient(t, 3)
	ctx := context.Background()
	for _, reply := range []resp.Value{
		bulkValue("5"),
		{Type: resp.SimpleString, Str: []byte("5")},
		{Type: resp.Double, Float: 5},
		{Type: resp.Double, Float: 1.5},
		{Type: resp.Integer, Int: 5},
	} {
		srv.load([]resp.Value{reply})
		got, err := c.IncrBy(ctx, "k", 1)
		b := c.NewBatch()
		fut := b.IncrBy("k", 1)
		srv.load([]resp.Value{reply})
		if xerr := b.Execute(ctx); xerr != nil {
			t.Fatalf("Execute: %v", xerr)
		}
		bgot, berr := fut.Result()
		for who, r := range map[string]struct {
			n   int64
			err error
		}{"IncrBy": {got, err}, "Batch.IncrBy": {bgot, berr}} {
			if reply.Type == resp.Integer {
				if r.err != nil || r.n != 5 {
					t.Errorf("%s answered %s = %d, %v; want 5", who, describeValue(reply), r.n, r.err)
				}
			} else if !errors.Is(r.err, ErrUnexpectedReply) {
				t.Errorf("%s answered %s = %d, %v; want an error matching ErrUnexpectedReply", who, describeValue(reply), r.n, r.err)
			}
		}
	}
}

// TestFieldValuesNeedOneValuePerField answers HMGET, HGETDEL and HGETEX
// of two fields, from a Client and from a batch, with one value and with
// three: each fails with ErrUnexpectedReply (a caller indexes Found by
// field) instead of a FieldValues of another length.
func TestFieldValuesNeedOneValuePerField(t *testing.T) {
	c, srv := hostileClient(t, 3)
	ctx := context.Background()
	calls := map[string]func() (FieldValues, error){
		"HMGet": func() (FieldValues, error) {
			v, f, err := c.HMGet(ctx, "k", "a", "b")
			return FieldValues{Values: v, Found: f}, err
		},
		"HGetDel": func() (FieldValues, error) { return c.HGetDel(ctx, "k", "a", "b") },
		"HGetEx":  func() (FieldValues, error) { return c.HGetEx(ctx, "k", HGetExOptions{}, "a", "b") },
	}
	members := map[string]func(b *Batch) Future[FieldValues]{
		"HMGet":   func(b *Batch) Future[FieldValues] { return b.HMGet("k", "a", "b") },
		"HGetDel": func(b *Batch) Future[FieldValues] { return b.HGetDel("k", "a", "b") },
		"HGetEx":  func(b *Batch) Future[FieldValues] { return b.HGetEx("k", HGetExOptions{}, "a", "b") },
	}
	for _, n := range []int{1, 3} {
		reply := resp.Value{Type: resp.Array, Elems: slices.Repeat([]resp.Value{bulkValue("v")}, n)}
		for name, call := range calls {
			srv.load([]resp.Value{reply})
			if got, err := call(); !errors.Is(err, ErrUnexpectedReply) {
				t.Errorf("%s of 2 fields answered with %d values = %v, %v; want an error matching ErrUnexpectedReply", name, n, got, err)
			}
			b := c.NewBatch()
			fut := members[name](b)
			srv.load([]resp.Value{reply})
			if err := b.Execute(ctx); err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if got, err := fut.Result(); !errors.Is(err, ErrUnexpectedReply) {
				t.Errorf("Batch.%s of 2 fields answered with %d values = %v, %v; want an error matching ErrUnexpectedReply", name, n, got, err)
			}
		}
	}
}

// TestScoredMembersRefuseNonScalarMembers answers ZRANGE ... WITHSCORES
// with member-score lists whose member is an aggregate, a null or an
// error, in RESP3's pair form and RESP2's flat form: each fails with
// ErrUnexpectedReply instead of giving a member "" (or the error's text).
func TestScoredMembersRefuseNonScalarMembers(t *testing.T) {
	c, srv := hostileClient(t, 3)
	score := resp.Value{Type: resp.Double, Float: 1}
	members := map[string]resp.Value{
		"map":   {Type: resp.Map},
		"array": {Type: resp.Array, Elems: []resp.Value{bulkValue("m")}},
		"null":  {Type: resp.Null},
		"error": {Type: resp.SimpleError, Str: []byte("ERR member")},
	}
	for name, member := range members {
		for form, reply := range map[string]resp.Value{
			"flat":  {Type: resp.Array, Elems: []resp.Value{member, score}},
			"pairs": {Type: resp.Array, Elems: []resp.Value{{Type: resp.Array, Elems: []resp.Value{member, score}}}},
		} {
			srv.load([]resp.Value{reply})
			got, err := c.ZRangeWithScores(context.Background(), "k", 0, -1)
			if !errors.Is(err, ErrUnexpectedReply) {
				t.Errorf("ZRangeWithScores answered with a %s member (%s form) = %v, %v; want an error matching ErrUnexpectedReply", name, form, got, err)
			}
		}
	}
}

// TestGeoLocationRefusesRepeatedFields answers GEOSEARCH ... WITHDIST
// WITHHASH WITHCOORD with locations that carry a field twice (two
// distances, two hashes, two positions): each fails with
// ErrUnexpectedReply instead of the later field silently replacing the
// earlier one, and a well-formed location still converts.
func TestGeoLocationRefusesRepeatedFields(t *testing.T) {
	c, srv := hostileClient(t, 3)
	pos := resp.Value{Type: resp.Array, Elems: []resp.Value{bulkValue("1"), bulkValue("2")}}
	dist, hash := bulkValue("1.5"), resp.Value{Type: resp.Integer, Int: 7}
	q := GeoSearchQuery{Member: "m", Radius: 1}
	with := GeoWith{Coord: true, Dist: true, Hash: true}
	loc := func(fields ...resp.Value) resp.Value {
		return resp.Value{Type: resp.Array, Elems: []resp.Value{{Type: resp.Array, Elems: append([]resp.Value{bulkValue("m")}, fields...)}}}
	}
	srv.load([]resp.Value{loc(dist, hash, pos)})
	got, err := c.GeoSearchLocations(context.Background(), "k", q, with)
	if err != nil || len(got) != 1 || got[0].Dist != 1.5 || got[0].Hash != 7 || got[0].Pos != (GeoPos{Longitude: 1, Latitude: 2}) {
		t.Fatalf("GeoSearchLocations of a well-formed location = %+v, %v", got, err)
	}
	for name, reply := range map[string]resp.Value{
		"two distances":                loc(dist, bulkValue("2.5"), hash, pos),
		"a boolean after the distance": loc(dist, resp.Value{Type: resp.Boolean}, pos),
		"a boolean":                    loc(resp.Value{Type: resp.Boolean}, hash, pos),
		"two hashes":                   loc(dist, hash, hash, pos),
		"two positions":                loc(dist, hash, pos, pos),
	} {
		srv.load([]resp.Value{reply})
		got, err := c.GeoSearchLocations(context.Background(), "k", q, with)
		if !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("GeoSearchLocations of a location with %s = %+v, %v; want an error matching ErrUnexpectedReply", name, got, err)
		}
	}
}

// TestStringMapReadsEveryPairShape reads ZRANGE ... WITHSCORES from the
// real server with Reply.StringMap over RESP2 (a flat array) and RESP3
// (an array of [member, score] pairs): both give the same map. And
// HGETALL answered with a map whose value is an aggregate fails with
// ErrUnexpectedReply instead of giving "".
func TestStringMapReadsEveryPairShape(t *testing.T) {
	for _, proto := range []int{2, 3} {
		c := newClient(t, Options{Protocol: proto})
		k := key(t, "z", strconv.Itoa(proto))
		ctx := testCtx(t)
		if _, err := c.ZAdd(ctx, k, ZAddOptions{}, Z{Member: "a", Score: 1}, Z{Member: "b", Score: 2.5}); err != nil {
			t.Fatal(err)
		}
		r, err := c.Do(ctx, NewCommand("ZRANGE"), k, 0, -1, "WITHSCORES")
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.StringMap()
		if want := map[string]string{"a": "1", "b": "2.5"}; err != nil || !maps.Equal(got, want) {
			t.Errorf("RESP%d: StringMap of ZRANGE WITHSCORES = %v, %v; want %v", proto, got, err, want)
		}
	}
	c, srv := hostileClient(t, 3)
	srv.load([]resp.Value{{Type: resp.Map, Elems: []resp.Value{bulkValue("f"), {Type: resp.Array, Elems: []resp.Value{bulkValue("x")}}}}})
	got, err := c.HGetAll(context.Background(), "k")
	if !errors.Is(err, ErrUnexpectedReply) {
		t.Errorf("HGetAll of a map with an array value = %v, %v; want an error matching ErrUnexpectedReply", got, err)
	}
}

// TestStringPartsRefuseAggregates answers commands whose reply holds a
// key, a member, an element, an entry ID or a previous value with an
// aggregate in that place: BLPOP, BZPOPMIN, XRANGE and SET ... GET each
// fail with ErrUnexpectedReply instead of returning "" for it.
func TestStringPartsRefuseAggregates(t *testing.T) {
	c, srv := hostileClient(t, 3)
	ctx := context.Background()
	agg := resp.Value{Type: resp.Array, Elems: []resp.Value{bulkValue("x")}}
	arr := func(e ...resp.Value) resp.Value { return resp.Value{Type: resp.Array, Elems: e} }
	score := resp.Value{Type: resp.Double, Float: 1}
	entry := func(id resp.Value) resp.Value { return arr(arr(id, arr(bulkValue("f"), bulkValue("v")))) }
	tests := []struct {
		name  string
		reply resp.Value
		call  func() error
	}{
		{"BLPop key", arr(agg, bulkValue("v")), func() error { _, _, err := c.BLPop(ctx, time.Second, "k"); return err }},
		{"BLPop element", arr(bulkValue("k"), agg), func() error { _, _, err := c.BLPop(ctx, time.Second, "k"); return err }},
		{"BZPopMin key", arr(agg, bulkValue("m"), score), func() error { _, _, err := c.BZPopMin(ctx, time.Second, "k"); return err }},
		{"BZPopMin member", arr(bulkValue("k"), agg, score), func() error { _, _, err := c.BZPopMin(ctx, time.Second, "k"); return err }},
		{"XRange entry ID", entry(agg), func() error { _, err := c.XRange(ctx, "k", "-", "+", 0); return err }},
		{"SetWithOptions GET", agg, func() error { _, err := c.SetWithOptions(ctx, "k", "v", SetOptions{Get: true}); return err }},
	}
	for _, tt := range tests {
		srv.load([]resp.Value{tt.reply})
		if err := tt.call(); !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("%s answered with an array: error %v; want one matching ErrUnexpectedReply", tt.name, err)
		}
	}
	srv.load([]resp.Value{entry(bulkValue("1-0"))})
	if got, err := c.XRange(ctx, "k", "-", "+", 0); err != nil || len(got) != 1 || got[0].ID != "1-0" || !slices.Equal(got[0].Fields, []string{"f", "v"}) {
		t.Errorf("XRange of a well-formed entry = %+v, %v", got, err)
	}
}

// TestErrorElementsAreNotValues answers MGET, SMEMBERS and HGETALL with
// an error reply inside the array or map, as a proxy does for a key whose
// shard failed: each fails with ErrUnexpectedReply naming the element, as
// Reply.Int64s does (the error's text is not a value, nor is the key
// found).
func TestErrorElementsAreNotValues(t *testing.T) {
	c, srv := hostileClient(t, 3)
	ctx := context.Background()
	failure := resp.Value{Type: resp.SimpleError, Str: []byte("ERR upstream failure")}
	arr := resp.Value{Type: resp.Array, Elems: []resp.Value{bulkValue("v"), failure}}
	tests := []struct {
		name  string
		reply resp.Value
		at    string // where the error says the error element was
		call  func() (any, error)
	}{
		{"MGet", arr, "element 1", func() (any, error) { v, found, err := c.MGet(ctx, "a", "b"); return []any{v, found}, err }},
		{"SMembers", arr, "element 1", func() (any, error) { return c.SMembers(ctx, "k") }},
		{"HGetAll", resp.Value{Type: resp.Map, Elems: []resp.Value{bulkValue("f"), failure}}, `value of "f"`, func() (any, error) { return c.HGetAll(ctx, "k") }},
	}
	for _, tt := range tests {
		srv.load([]resp.Value{tt.reply})
		got, err := tt.call()
		if !errors.Is(err, ErrUnexpectedReply) || !strings.Contains(err.Error(), tt.at) {
			t.Errorf("%s with an error element = %v, %v; want an error matching ErrUnexpectedReply that names the element", tt.name, got, err)
		}
	}
}

// TestTransactionRefusesMisshapenExec answers a transaction of two
// members, and a Watch queue of two, with an EXEC array of three
// replies, or of one: no member takes a reply whose owner is unknown,
// each fails with ErrUnexpectedReply; an EXEC array of two gives each
// member its own.
func TestTransactionRefusesMisshapenExec(t *testing.T) {
	c, srv := hostileClient(t, 3)
	ctx := context.Background()
	for n := 1; n <= 3; n++ {
		exec := resp.Value{Type: resp.Array}
		for i := range n {
			exec.Elems = append(exec.Elems, bulkValue("r"+strconv.Itoa(i)))
		}
		for _, watch := range []bool{false, true} {
			var a, b Future[string]
			if watch {
				srv.load([]resp.Value{{Type: resp.SimpleString, Str: []byte("OK")}, exec}) // WATCH, then EXEC
				err := c.Watch(ctx, func(tx *Tx) error {
					a, b = tx.Queue().Get("a"), tx.Queue().Get("b")
					return nil
				}, "a")
				if err != nil {
					t.Fatalf("EXEC of %d replies: Watch: %v", n, err)
				}
			} else {
				srv.load([]resp.Value{exec})
				tx := c.NewTransaction()
				a, b = tx.Get("a"), tx.Get("b")
				if err := tx.Execute(ctx); err != nil {
					t.Fatalf("EXEC of %d replies: Execute: %v", n, err)
				}
			}
			ga, erra := a.Result()
			gb, errb := b.Result()
			if n == 2 {
				if erra != nil || errb != nil || ga != "r0" || gb != "r1" {
					t.Errorf("EXEC of %d replies (Watch %v): members = %q, %v and %q, %v; want r0 and r1", n, watch, ga, erra, gb, errb)
				}
				continue
			}
			if !errors.Is(erra, ErrUnexpectedReply) || !errors.Is(errb, ErrUnexpectedReply) {
				t.Errorf("EXEC of %d replies (Watch %v): members = %q, %v and %q, %v; want errors matching ErrUnexpectedReply", n, watch, ga, erra, gb, errb)
			}
		}
	}
}

// TestClusterSplitSumRefusesNonIntegers answers the two per-slot parts
// of a Cluster DEL of keys in two slots, one part with an integer and the
// other with something else (a null, a string, a double): DEL fails with
// ErrUnexpectedReply instead of returning the sum of the integer parts.
func TestClusterSplitSumRefusesNonIntegers(t *testing.T) {
	srv := newHostileServer(t, 3)
	srv.cluster = true
	c := newClient(t, Options{
		Endpoints:        []string{"127.0.0.1:6379"},
		Cluster:          &ClusterOptions{},
		Dialer:           srv.dial,
		IdlePingInterval: NoTimeout,
	})
	ctx := context.Background()
	for _, odd := range []resp.Value{{Type: resp.Null}, bulkValue("5"), {Type: resp.Double, Float: 2}} {
		srv.load([]resp.Value{{Type: resp.Integer, Int: 1}, odd})
		n, err := c.Del(ctx, "a", "b") // slots 15495 and 3300
		if !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("DEL with parts answered 1 and %s = %d, %v; want an error matching ErrUnexpectedReply", describeValue(odd), n, err)
		}
	}
	srv.load([]resp.Value{{Type: resp.Integer, Int: 1}, {Type: resp.Integer, Int: 1}})
	if n, err := c.Del(ctx, "a", "b"); err != nil || n != 2 {
		t.Errorf("DEL with parts answered 1 and 1 = %d, %v; want 2", n, err)
	}
}

// TestFloatReplyBeyondFloat64NamesTheValue makes the real server produce
// a number a float64 cannot hold (INCRBYFLOAT computes in long double:
// 1.7e308 + 1.7e308 is stored as 3.4e308). The caller gets an error that
// matches ErrUnexpectedReply and says which value did not convert and
// why, not a bare "unexpected reply type" with the parser's text; the
// same holds for Reply.Float64.
func TestFloatReplyBeyondFloat64NamesTheValue(t *testing.T) {
	c := newClient(t, Options{})
	ctx := testCtx(t)
	key := keyPrefix(t) + "f"
	if err := c.Set(ctx, key, "1.7e308"); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrUnexpectedReply) {
			t.Fatalf("%s: err = %v, want ErrUnexpectedReply", what, err)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "respire: cannot convert bulk string \"34") ||
			!strings.HasSuffix(msg, "to number: value out of range") {
			t.Fatalf("%s: err = %q, want it to name the value and the range", what, msg)
		}
	}
	_, err := c.IncrByFloat(ctx, key, 1.7e308)
	check("IncrByFloat", err)
	r, err := c.Do(ctx, NewCommand("GET"), key)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Float64()
	check("Reply.Float64", err)
}
