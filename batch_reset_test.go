package respire

import (
	"context"
	"errors"
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
