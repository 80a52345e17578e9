package respire

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

// Family A (lists and sets): the typed commands without a Batch member.
var _ = exclude(unbatchedCommands, map[string]string{
	"BLPOP":      "blocking: a batch refuses blocking commands, which hold the connection; use Client.BLPop",
	"BRPOP":      "blocking: a batch refuses blocking commands, which hold the connection; use Client.BRPop",
	"BLMOVE":     "blocking: a batch refuses blocking commands, which hold the connection; use Client.BLMove (or LMove in the batch)",
	"BLMPOP":     "blocking: a batch refuses blocking commands, which hold the connection; use Client.BLMPop (or LMPop in the batch)",
	"BRPOPLPUSH": "blocking: a batch refuses blocking commands, which hold the connection; use Client.BRPopLPush (or RPopLPush in the batch)",
	"SSCAN":      "an iterator: Client.SScan and Client.SScanPages follow the cursor from page to page, which one batch member cannot; queue a single page with Batch.Do(catalog.Set.SSCAN(), key, cursor)",
})

// listSetStep is one Batch member of the family and its Client method:
// the method name and its arguments, without the context.
type listSetStep struct {
	method string
	args   []any
}

func lsStep(method string, args ...any) listSetStep { return listSetStep{method, args} }

// unordered are the methods whose []string result is a set, compared
// sorted.
var unordered = []string{"SMembers", "SInter", "SUnion", "SDiff", "SRandMember"}

// listSetSteps returns, in order, a call of every Batch member of the
// family on the keys seedListSet makes (errors and nulls included), so
// that running them in one batch and one by one must give the same
// results.
func listSetSteps(k func(string) string) []listSetStep {
	return []listSetStep{
		lsStep("LPush", k("l"), "x", "y"),
		lsStep("RPush", k("l"), "z"),
		lsStep("LPop", k("l")),
		lsStep("RPop", k("l")),
		lsStep("LPop", k("missing")),
		lsStep("LLen", k("l")),
		lsStep("LLen", k("str")),
		lsStep("LIndex", k("l"), int64(1)),
		lsStep("LIndex", k("l"), int64(99)),
		lsStep("LSet", k("l"), int64(0), "A"),
		lsStep("LSet", k("l"), int64(99), "A"),
		lsStep("LRange", k("l"), int64(0), int64(-1)),
		lsStep("LRem", k("l"), int64(0), "b"),
		lsStep("LInsert", k("l"), true, "c", "i"),
		lsStep("LPos", k("l"), "c"),
		lsStep("LPos", k("l"), "nope"),
		lsStep("LMove", k("l"), k("dst"), ListLeft, ListRight),
		lsStep("RPopLPush", k("l"), k("dst")),
		lsStep("LMPop", ListRight, int64(2), k("missing"), k("l")),
		lsStep("LMPop", ListLeft, int64(0), k("missing")),
		lsStep("LPushX", k("dst"), "p"),
		lsStep("RPushX", k("missing"), "q"),
		lsStep("LTrim", k("dst"), int64(0), int64(1)),
		lsStep("LRange", k("dst"), int64(0), int64(-1)),
		lsStep("LRange", k("l"), int64(0), int64(-1)),
		lsStep("SAdd", k("s1"), "a", "z"),
		lsStep("SMembers", k("s1")),
		lsStep("SRem", k("s1"), "z", "q"),
		lsStep("SCard", k("s1")),
		lsStep("SCard", k("str")),
		lsStep("SIsMember", k("s1"), "a"),
		lsStep("SMIsMember", k("s1"), "a", "q", "d"),
		lsStep("SInter", k("s1"), k("s2")),
		lsStep("SUnion", k("s1"), k("s2")),
		lsStep("SDiff", k("s1"), k("s2")),
		lsStep("SInterCard", int64(1), k("s1"), k("s2")),
		lsStep("SInterCard", int64(0), k("s1"), k("s2"), k("s3")),
		lsStep("SPop", k("one")),
		lsStep("SPop", k("one")),
		lsStep("SRandMember", k("s1"), int64(10)),
		lsStep("SRandMember", k("s3"), int64(0)),
		lsStep("SMove", k("s1"), k("s2"), "a"),
		lsStep("SMove", k("s1"), k("s2"), "nope"),
		lsStep("SInterStore", k("sdst"), k("s1"), k("s2")),
		lsStep("SUnionStore", k("sdst"), k("s1"), k("s3")),
		lsStep("SDiffStore", k("sdst"), k("s1"), k("s2")),
		lsStep("SMembers", k("sdst")),
	}
}

// seedListSet seeds the keys of listSetSteps: l = [a b c b d], str a
// string, s1 = {a b c d}, s2 = {c d e}, s3 = {d e f}, one = {x}.
func seedListSet(ctx context.Context, c *Client, k func(string) string) error {
	if err := seedList(ctx, c, k); err != nil {
		return err
	}
	for _, s := range []struct {
		key     string
		members []string
	}{
		{"s1", []string{"a", "b", "c", "d"}},
		{"s2", []string{"c", "d", "e"}},
		{"s3", []string{"d", "e", "f"}},
		{"one", []string{"x"}},
	} {
		if _, err := c.SAdd(ctx, k(s.key), s.members...); err != nil {
			return err
		}
	}
	return nil
}

// listSetResult is one step's outcome, for comparing.
type listSetResult struct {
	v   any
	err error
}

func normalised(method string, v any) any {
	if ss, ok := v.([]string); ok && slices.Contains(unordered, method) {
		ss = slices.Clone(ss)
		slices.Sort(ss)
		return ss
	}
	return v
}

// sameOutcome reports whether a batch member's result and the Client
// method's agree: equal values, or errors of the same kind (ErrNil, the
// same server error code, ErrInvalidArgument).
func sameOutcome(a, b listSetResult) bool {
	switch {
	case a.err == nil && b.err == nil:
		return reflect.DeepEqual(a.v, b.v)
	case a.err == nil || b.err == nil:
		return false
	case errors.Is(a.err, ErrNil) || errors.Is(b.err, ErrNil):
		return errors.Is(a.err, ErrNil) && errors.Is(b.err, ErrNil)
	}
	var sa, sb *ServerError
	if errors.As(a.err, &sa) || errors.As(b.err, &sb) {
		return errors.As(a.err, &sa) && errors.As(b.err, &sb) && sa.Code == sb.Code && sa.Command == sb.Command
	}
	return errors.Is(a.err, ErrInvalidArgument) && errors.Is(b.err, ErrInvalidArgument)
}

// TestListSetBatchMatchesClient queues every list and set Batch member in
// one batch (and one transaction), then reseeds the keys and calls each
// Client method in the same order: every Future must hold what the method
// returned, under RESP2 and RESP3.
func TestListSetBatchMatchesClient(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		for _, unit := range []struct {
			name string
			make func() *Batch
		}{{"Batch", c.NewBatch}, {"Transaction", c.NewTransaction}} {
			t.Run(unit.name, func(t *testing.T) {
				ctx := testCtx(t)
				used := map[string]bool{}
				k := func(s string) string {
					name := key(t, s)
					used[name] = true
					return name
				}
				steps := listSetSteps(k)
				reseed := func() {
					t.Helper()
					var keys []string
					for name := range used {
						keys = append(keys, name)
					}
					if _, err := c.Del(ctx, keys...); err != nil {
						t.Fatal(err)
					}
					if err := seedListSet(ctx, c, k); err != nil {
						t.Fatalf("seed: %v", err)
					}
				}

				reseed()
				b := unit.make()
				var results []func() (any, error)
				for _, s := range steps {
					m := reflect.ValueOf(b).MethodByName(s.method)
					if !m.IsValid() {
						t.Fatalf("Batch has no method %s", s.method)
					}
					fut := m.Call(values(s.args))[0]
					results = append(results, func() (any, error) {
						out := fut.MethodByName("Result").Call(nil)
						err, _ := out[1].Interface().(error)
						return out[0].Interface(), err
					})
				}
				if err := b.Execute(ctx); err != nil {
					t.Fatalf("Execute: %v", err)
				}
				queued := make([]listSetResult, len(steps))
				for i, r := range results {
					v, err := r()
					queued[i] = listSetResult{normalised(steps[i].method, v), err}
				}

				reseed()
				for i, s := range steps {
					m := reflect.ValueOf(c).MethodByName(s.method)
					out := m.Call(append([]reflect.Value{reflect.ValueOf(ctx)}, values(s.args)...))
					var direct listSetResult
					direct.err, _ = out[len(out)-1].Interface().(error)
					if len(out) == 1 {
						direct.v = struct{}{} // LSet, LTrim: a status, as the Future holds
					} else {
						direct.v = normalised(s.method, out[0].Interface())
					}
					if !sameOutcome(queued[i], direct) {
						t.Errorf("step %d %s%v: batch %#v, %v; client %#v, %v", i, s.method, s.args, queued[i].v, queued[i].err, direct.v, direct.err)
					}
				}
			})
		}
	})
}

func values(args []any) []reflect.Value {
	out := make([]reflect.Value, len(args))
	for i, a := range args {
		out[i] = reflect.ValueOf(a)
	}
	return out
}

// TestListSetBatchStepsCoverFamily: listSetSteps calls every Batch member
// of the list and set commands, so TestListSetBatchMatchesClient checks
// them all.
func TestListSetBatchStepsCoverFamily(t *testing.T) {
	batch := methodKeys(&Batch{})
	stepped := map[string]bool{}
	for _, s := range listSetSteps(func(s string) string { return s }) {
		stepped[methodKey(s.method)] = true
	}
	for _, cmd := range catalog.All() {
		if g := cmd.Group(); g != "list" && g != "set" {
			continue
		}
		name := cmd.FullName()
		if method, ok := batch[methodKey(name)]; ok && !stepped[methodKey(name)] {
			t.Errorf("Batch.%s (%s) is in no step of listSetSteps", method, name)
		}
	}
}

// Bad input to a list or set Batch member fails the member and Execute
// before any I/O, as the Client method does; so does a blocking list
// command queued raw (the reason the blocking ones have no member).
func TestListSetBatchBadInput(t *testing.T) {
	rec := newRecorder(t, "")
	c := newClient(t, Options{Endpoints: []string{rec.proxy.Addr()}})
	ctx := testCtx(t)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	members := map[string]func(b *Batch) error{
		"LPush":       func(b *Batch) error { return b.LPush("k").Err() },
		"SAdd":        func(b *Batch) error { return b.SAdd("k").Err() },
		"LMove":       func(b *Batch) error { return b.LMove("a", "b", ListSide(3), ListLeft).Err() },
		"LMPop":       func(b *Batch) error { return b.LMPop(ListLeft, 1).Err() },
		"LMPopCount":  func(b *Batch) error { return b.LMPop(ListLeft, -2, "k").Err() },
		"SMIsMember":  func(b *Batch) error { return b.SMIsMember("k").Err() },
		"SInter":      func(b *Batch) error { return b.SInter().Err() },
		"SInterCard":  func(b *Batch) error { return b.SInterCard(-1, "k").Err() },
		"SUnionStore": func(b *Batch) error { return b.SUnionStore("dst").Err() },
		"Do BLMPOP": func(b *Batch) error {
			return b.Do(catalog.List.BLMPOP(), "1", "1", "k", "LEFT").Err()
		},
		"Do BRPOPLPUSH": func(b *Batch) error {
			return b.Do(catalog.List.BRPOPLPUSH(), "a", "b", "1").Err()
		},
	}
	before := rec.count()
	for name, add := range members {
		t.Run(name, func(t *testing.T) {
			b := c.NewBatch()
			ok := b.LLen("k") // a good member fails with the unit
			_ = add(b)
			if err := b.Execute(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("Execute = %v; want ErrInvalidArgument", err)
			}
			if err := ok.Err(); err == nil {
				t.Errorf("the good member succeeded in a batch that was not sent")
			}
		})
	}
	if n := rec.count() - before; n != 0 {
		t.Errorf("the server received %d frames (last %q); want 0", n, rec.last())
	}
}

// TestLMPopReplies checks the decoding of LMPOP and BLMPOP replies,
// injected by a proxy: each protocol's [key, [elements]] and null, and
// shapes that are not a pop.
func TestLMPopReplies(t *testing.T) {
	ok := KeyElements{Key: "k", Elements: []string{"a", "b"}}
	tests := []struct {
		name  string
		proto int
		raw   string
		want  KeyElements
		err   error
	}{
		{"RESP2", 2, "*2\r\n$1\r\nk\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n", ok, nil},
		{"RESP3", 3, "*2\r\n$1\r\nk\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n", ok, nil},
		{"RESP2Null", 2, "*-1\r\n", KeyElements{}, ErrNil},
		{"RESP3Null", 3, "_\r\n", KeyElements{}, ErrNil},
		{"OneElement", 3, "*1\r\n$1\r\nk\r\n", KeyElements{}, ErrUnexpectedReply},
		{"ElementsNotArray", 2, "*2\r\n$1\r\nk\r\n$1\r\na\r\n", KeyElements{}, ErrUnexpectedReply},
		{"NestedElement", 3, "*2\r\n$1\r\nk\r\n*1\r\n*0\r\n", KeyElements{}, ErrUnexpectedReply},
		{"Integer", 2, ":1\r\n", KeyElements{}, ErrUnexpectedReply},
	}
	calls := []struct {
		command string
		do      func(ctx context.Context, c *Client) (KeyElements, error)
	}{
		{"LMPOP", func(ctx context.Context, c *Client) (KeyElements, error) {
			return c.LMPop(ctx, ListLeft, 2, "k")
		}},
		{"BLMPOP", func(ctx context.Context, c *Client) (KeyElements, error) {
			return c.BLMPop(ctx, time.Second, ListLeft, 2, "k")
		}},
		{"LMPOP", func(ctx context.Context, c *Client) (KeyElements, error) {
			b := c.NewBatch()
			f := b.LMPop(ListLeft, 2, "k")
			if err := b.Execute(ctx); err != nil {
				return KeyElements{}, err
			}
			return f.Result()
		}},
	}
	for i, call := range calls {
		for _, tt := range tests {
			t.Run([]string{"LMPop", "BLMPop", "BatchLMPop"}[i]+"/"+tt.name, func(t *testing.T) {
				p := realProxy(t, standaloneAddr(t))
				p.MustAddRule(t, respiretest.Rule{Command: call.command, Times: respiretest.Always, Action: respiretest.Reply([]byte(tt.raw))})
				c := newClient(t, Options{Endpoints: []string{p.Addr()}, Protocol: tt.proto})
				got, err := call.do(testCtx(t), c)
				if tt.err != nil {
					if !errors.Is(err, tt.err) {
						t.Errorf("got %#v, %v; want error %v", got, err, tt.err)
					}
					return
				}
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %#v, %v; want %#v", got, err, tt.want)
				}
			})
		}
	}
}

// TestBlockingListPops runs BLMPop and BRPopLPush against the real
// server: elements present, the timeout (ErrNil), and a call blocked
// until another caller pushes.
func TestBlockingListPops(t *testing.T) {
	name := blockingName(t)
	forEachProtocol(t, Options{ClientName: name}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		l1, l2, dst := key(t, "l1"), key(t, "l2"), key(t, "dst")
		if _, err := c.RPush(ctx, l2, "a", "b", "c", "d"); err != nil {
			t.Fatal(err)
		}
		if got, err := c.BLMPop(ctx, time.Second, ListLeft, 2, l1, l2); err != nil || !reflect.DeepEqual(got, KeyElements{l2, []string{"a", "b"}}) {
			t.Errorf("BLMPop LEFT COUNT 2 = %#v, %v; want %s [a b]", got, err, l2)
		}
		if got, err := c.BLMPop(ctx, time.Second, ListRight, 0, l2); err != nil || !reflect.DeepEqual(got, KeyElements{l2, []string{"d"}}) {
			t.Errorf("BLMPop RIGHT = %#v, %v; want %s [d]", got, err, l2)
		}
		if v, err := c.BRPopLPush(ctx, l2, dst, time.Second); err != nil || v != "c" {
			t.Errorf("BRPopLPush = %q, %v; want c", v, err)
		}
		if _, err := c.BLMPop(ctx, 50*time.Millisecond, ListLeft, 1, l1, l2); !errors.Is(err, ErrNil) {
			t.Errorf("BLMPop on empty lists = %v; want ErrNil after the timeout", err)
		}
		if _, err := c.BRPopLPush(ctx, l2, dst, 50*time.Millisecond); !errors.Is(err, ErrNil) {
			t.Errorf("BRPopLPush from an empty list = %v; want ErrNil after the timeout", err)
		}

		type popped struct {
			v   KeyElements
			err error
		}
		pops := make(chan popped, 1)
		go func() {
			v, err := c.BLMPop(ctx, 0, ListRight, 5, l1)
			pops <- popped{v, err}
		}()
		waitNamedBlocked(t, name)
		if _, err := c.RPush(ctx, l1, "x", "y"); err != nil {
			t.Fatal(err)
		}
		if p := <-pops; p.err != nil || !reflect.DeepEqual(p.v, KeyElements{l1, []string{"y", "x"}}) {
			t.Errorf("blocked BLMPop = %#v, %v; want %s [y x]", p.v, p.err, l1)
		}

		moved := make(chan popped, 1)
		go func() {
			v, err := c.BRPopLPush(ctx, l1, dst, 0)
			moved <- popped{KeyElements{Elements: []string{v}}, err}
		}()
		waitNamedBlocked(t, name)
		if _, err := c.RPush(ctx, l1, "z"); err != nil {
			t.Fatal(err)
		}
		if p := <-moved; p.err != nil || p.v.Elements[0] != "z" {
			t.Errorf("blocked BRPopLPush = %q, %v; want z", p.v.Elements[0], p.err)
		}
		if got, err := c.LRange(ctx, dst, 0, -1); err != nil || !reflect.DeepEqual(got, []string{"z", "c"}) {
			t.Errorf("destination = %q, %v; want [z c]", got, err)
		}
	})
}

// Bad input to BLMPop and BRPopLPush is refused before anything is sent,
// and opens no dedicated connection.
func TestBlockingListPopsBadInput(t *testing.T) {
	runBadInput(t, []badInput{
		{"BLMPopNoKeys", "no keys", func(ctx context.Context, c *Client) error {
			_, err := c.BLMPop(ctx, time.Second, ListLeft, 1)
			return err
		}},
		{"BLMPopNegativeCount", "count", func(ctx context.Context, c *Client) error {
			_, err := c.BLMPop(ctx, time.Second, ListLeft, -1, "k")
			return err
		}},
		{"BLMPopBadSide", "ListLeft", func(ctx context.Context, c *Client) error {
			_, err := c.BLMPop(ctx, time.Second, ListSide(5), 1, "k")
			return err
		}},
		{"BLMPopNegativeTimeout", "timeout", func(ctx context.Context, c *Client) error {
			_, err := c.BLMPop(ctx, -time.Second, ListLeft, 1, "k")
			return err
		}},
		{"BLMPopSubMillisecond", "millisecond", func(ctx context.Context, c *Client) error {
			_, err := c.BLMPop(ctx, time.Microsecond, ListLeft, 1, "k")
			return err
		}},
		{"BRPopLPushNegativeTimeout", "timeout", func(ctx context.Context, c *Client) error {
			_, err := c.BRPopLPush(ctx, "a", "b", -1)
			return err
		}},
		{"BRPopLPushSubMillisecond", "millisecond", func(ctx context.Context, c *Client) error {
			_, err := c.BRPopLPush(ctx, "a", "b", time.Microsecond)
			return err
		}},
	})
}

// On a Cluster client LMPop, BLMPop and SInterCard (keys after numkeys)
// go to the node that serves their keys, directly and in a batch.
func TestListSetMovableKeysOnCluster(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	tag := "{" + key(t, "tag") + "}"
	l1, l2, s1, s2 := tag+"l1", tag+"l2", tag+"s1", tag+"s2"
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), l1, l2, s1, s2) })
	if _, err := c.RPush(ctx, l2, "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SAdd(ctx, s1, "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SAdd(ctx, s2, "b", "c", "d"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.LMPop(ctx, ListLeft, 1, l1, l2); err != nil || !reflect.DeepEqual(got, KeyElements{l2, []string{"a"}}) {
		t.Errorf("LMPop = %#v, %v; want %s [a]", got, err, l2)
	}
	if got, err := c.BLMPop(ctx, time.Second, ListRight, 1, l1, l2); err != nil || !reflect.DeepEqual(got, KeyElements{l2, []string{"c"}}) {
		t.Errorf("BLMPop = %#v, %v; want %s [c]", got, err, l2)
	}
	if n, err := c.SInterCard(ctx, 0, s1, s2); err != nil || n != 2 {
		t.Errorf("SInterCard = %d, %v; want 2", n, err)
	}
	b := c.NewBatch()
	pop := b.LMPop(ListLeft, 0, l1, l2)
	card := b.SInterCard(1, s1, s2)
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if got, err := pop.Result(); err != nil || !reflect.DeepEqual(got, KeyElements{l2, []string{"b"}}) {
		t.Errorf("Batch.LMPop = %#v, %v; want %s [b]", got, err, l2)
	}
	if n, err := card.Result(); err != nil || n != 1 {
		t.Errorf("Batch.SInterCard = %d, %v; want 1", n, err)
	}
}
