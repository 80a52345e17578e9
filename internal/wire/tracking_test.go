package wire

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
)

// TestTrackingConnection: a Tracking connection turns CLIENT TRACKING on
// in OPTIN mode (the server reports it), receives the invalidation of a
// key read behind CLIENT CACHING YES as a push, and calls OnTrackingLost
// once when it ends; a RESP2 one fails its handshake without being
// retried as a lost connection.
func TestTrackingConnection(t *testing.T) {
	pushes := make(chan string, 4)
	var lost atomic.Int32
	c := dialRealConfig(t, Config{Proto: 3, Tracking: true,
		OnPush: func(v resp.Value) {
			if len(v.Elems) == 2 && v.Elems[0].Text() == "invalidate" && len(v.Elems[1].Elems) == 1 {
				pushes <- v.Elems[1].Elems[0].Text()
			}
		},
		OnTrackingLost: func() { lost.Add(1) }})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	do := func(args ...string) resp.Value {
		t.Helper()
		f := GetFrame()
		defer f.Release()
		f.Buf = resp.AppendArrayHeader(f.Buf, len(args))
		for _, a := range args {
			f.Buf = resp.AppendBulkString(f.Buf, a)
		}
		if err := c.Submit(ctx, time.Time{}, f); err != nil {
			t.Fatal(err)
		}
		if err := f.Wait(ctx, time.Time{}); err != nil || f.Err != nil || f.IsErr {
			t.Fatalf("%v: %v %v %s", args, err, f.Err, f.ErrReply)
		}
		return f.Value.Clone()
	}
	info := do("CLIENT", "TRACKINGINFO")
	var flags []string
	for i := 0; i+1 < len(info.Elems); i += 2 {
		if info.Elems[i].Text() == "flags" {
			for _, f := range info.Elems[i+1].Elems {
				flags = append(flags, f.Text())
			}
		}
	}
	if !slices.Contains(flags, "on") || !slices.Contains(flags, "optin") {
		t.Fatalf("CLIENT TRACKINGINFO flags = %v, want on and optin", flags)
	}
	key := "respire-test:wire-tracking:" + time.Now().Format(time.RFC3339Nano)
	do("SET", key, "1")
	do("CLIENT", "CACHING", "YES")
	do("GET", key)
	do("DEL", key)
	do("PING") // the invalidation of DEL reached the reader before PONG
	select {
	case k := <-pushes:
		if k != key {
			t.Fatalf("invalidation of %q, want %q", k, key)
		}
	default:
		t.Fatal("no invalidation push for the tracked key")
	}
	_ = c.Close()
	<-c.Dead()
	if n := lost.Load(); n != 1 {
		t.Fatalf("OnTrackingLost called %d times, want 1", n)
	}

	_, err := Dial(ctx, Config{Addr: standaloneAddr(t), Proto: 2, Tracking: true}, nil)
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Reason != Handshake || !errors.Is(err, ErrTrackingNeedsRESP3) {
		t.Fatalf("RESP2 Tracking dial = %v, want a Handshake ConnError with ErrTrackingNeedsRESP3", err)
	}
}
