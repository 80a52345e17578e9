package respire

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/respire-go/respire/catalog"
)

// TestBatchResetKeepsScriptAndFunctionReplies: a Reply read from a
// Script or Function member stays valid after Reset and the next
// execution of the same batch, as Reset promises for every value handed
// out. Those members hand out a Reply that aliases the batch's reply
// memory, like a Do member; Reset dropped that memory only after a Do
// member, so the next execution decoded its replies over the earlier
// Reply's bytes.
func TestBatchResetKeepsScriptAndFunctionReplies(t *testing.T) {
	c := newClient(t, Options{})
	ctx := testCtx(t)
	first, second := strings.Repeat("a", 64), strings.Repeat("b", 64)
	k1, k2 := key(t, "k1"), key(t, "k2")
	if err := c.MSet(ctx, k1, first, k2, second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), k1, k2) })
	lib, name, src := testLibrary(t)
	deleteLibrary(t, lib, standaloneAddr(t))
	fn := NewFunction(lib, name, FunctionOptions{ReadOnly: true, Source: src})
	if err := fn.Load(ctx, c); err != nil {
		t.Fatal(err)
	}
	get := NewScript("return redis.call('GET', KEYS[1])", ScriptOptions{ReadOnly: true})
	for member, queue := range map[string]func(b *Batch, k string) Future[Reply]{
		"Script":   func(b *Batch, k string) Future[Reply] { return b.Script(get, []string{k}) },
		"Function": func(b *Batch, k string) Future[Reply] { return b.Function(fn, []string{k}) },
	} {
		t.Run(member, func(t *testing.T) {
			b := c.NewBatch()
			f := queue(b, k1)
			queue(b, k1) // two members: the replies go to the batch's reply memory
			if err := b.Execute(ctx); err != nil {
				t.Fatalf("Execute: %v", err)
			}
			r, err := f.Result()
			if err != nil {
				t.Fatalf("member: %v", err)
			}
			b.Reset()
			queue(b, k2)
			queue(b, k2)
			if err := b.Execute(ctx); err != nil {
				t.Fatalf("second Execute: %v", err)
			}
			if got, err := r.String(); err != nil || got != first {
				t.Errorf("the first use's Reply after Reset and a second Execute = %q, %v; want %q", got, err, first)
			}
		})
	}
}

// TestZeroBatchFailsClearly proves that a Batch not made by a Client (its
// zero value) gives every queueing method and Execute an
// ErrInvalidArgument instead of a nil-pointer panic.
func TestZeroBatchFailsClearly(t *testing.T) {
	ctx := context.Background()
	s := NewScript("return 1", ScriptOptions{})
	queue := map[string]func(b *Batch) error{
		"Get":            func(b *Batch) error { return b.Get("k").Err() },
		"SetWithOptions": func(b *Batch) error { return b.SetWithOptions("k", "v", SetOptions{}).Err() },
		"XAdd":           func(b *Batch) error { return b.XAdd("s", XAddOptions{}, "f", "v").Err() },
		"Scan":           func(b *Batch) error { return b.Scan(ScanPage[string]{Cursor: "7"}, ScanOptions{}).Err() },
		"Script":         func(b *Batch) error { return b.Script(s, []string{"k"}).Err() },
		"Do":             func(b *Batch) error { return b.Do(catalog.String.GET(), "k").Err() },
	}
	for name, q := range queue {
		t.Run(name, func(t *testing.T) {
			var b Batch
			q(&b)
			err := b.Execute(ctx)
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "NewBatch") {
				t.Fatalf("Execute of a zero Batch after %s: %v, want an ErrInvalidArgument naming Client.NewBatch", name, err)
			}
		})
	}
}

// TestZeroBatchEveryMethodFailsClearly queues on a zero Batch through
// every queueing method of Batch, the generated ones included, each with
// the zero value of its parameters: none panics (the generated ones built
// their command with the Batch's nil Client), and Execute and the member
// fail with an ErrInvalidArgument.
func TestZeroBatchEveryMethodFailsClearly(t *testing.T) {
	bt := reflect.TypeFor[*Batch]()
	for i := range bt.NumMethod() {
		m := bt.Method(i)
		switch m.Name {
		case "Execute", "Len", "Reset":
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			b := new(Batch)
			in := []reflect.Value{reflect.ValueOf(b)}
			for j := 1; j < m.Type.NumIn(); j++ {
				in = append(in, reflect.Zero(m.Type.In(j)))
			}
			var out []reflect.Value
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("%s on a zero Batch panicked: %v", m.Name, p)
					}
				}()
				if m.Type.IsVariadic() {
					out = m.Func.CallSlice(in)
				} else {
					out = m.Func.Call(in)
				}
			}()
			errOf := out[0].MethodByName("Err")
			if !errOf.IsValid() {
				t.Fatalf("%s returns %s, which has no Err method", m.Name, out[0].Type())
			}
			if err := b.Execute(context.Background()); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Execute of a zero Batch after %s = %v, want an ErrInvalidArgument", m.Name, err)
			}
			if err, _ := errOf.Call(nil)[0].Interface().(error); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s member of a zero Batch after Execute = %v, want an ErrInvalidArgument", m.Name, err)
			}
		})
	}
}

// TestBatchLenCountsQueuedMembers proves that Len counts only the members
// queued to be sent: a member refused when it was added (an invalid
// argument, a member added after Execute) is not counted, though its
// Future reports the refusal; Reset brings Len back to zero.
func TestBatchLenCountsQueuedMembers(t *testing.T) {
	c := newClient(t, Options{Endpoints: []string{standaloneAddr(t)}})
	ctx := testCtx(t)
	k := key(t, "len")
	for _, b := range []*Batch{c.NewBatch(), c.NewTransaction()} {
		b.Set(k, "v")
		odd := b.MSet(k)
		b.Get(k)
		if n := b.Len(); n != 2 {
			t.Errorf("Len with MSET refused between SET and GET = %d, want 2", n)
		}
		if err := odd.Err(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("refused MSET = %v, want ErrInvalidArgument", err)
		}
		b.Reset()
		if n := b.Len(); n != 0 {
			t.Errorf("Len after Reset = %d, want 0", n)
		}
		b.Set(k, "v")
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		late := b.Get(k)
		if n := b.Len(); n != 1 {
			t.Errorf("Len with a GET added after Execute = %d, want 1", n)
		}
		if err := late.Err(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("GET added after Execute = %v, want ErrInvalidArgument", err)
		}
	}
}
