package pool

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// errRefused is the error of a dial the fake server refuses.
var errRefused = errors.New("fake: connection refused")

// fakeServer is a RESP3 server reached over net.Pipe through
// Config.Wire.Dial. It answers HELLO like Redis 7 and everything else with
// +OK. Dials can be made to fail or to wait for the test.
type fakeServer struct {
	mu       sync.Mutex
	dials    int        // dial hook calls
	sessions []net.Conn // server side of each established session, in dial order
	fail     error      // when set, dials return it
	gate     chan error // when set, each dial receives its outcome here first (nil: connect)
	wg       sync.WaitGroup
}

func newFakeServer(t *testing.T) *fakeServer {
	s := &fakeServer{}
	t.Cleanup(s.close)
	return s
}

// config returns a pool configuration dialing s.
func (s *fakeServer) config(max int) Config {
	return Config{Wire: wire.Config{Addr: "fake:6379", Dial: s.dial}, Max: max}
}

// dial is the Config.Wire.Dial hook.
func (s *fakeServer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	s.mu.Lock()
	s.dials++
	fail, gate := s.fail, s.gate
	s.mu.Unlock()
	if gate != nil {
		select {
		case err := <-gate:
			fail = err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	cli, srv := net.Pipe()
	s.mu.Lock()
	s.sessions = append(s.sessions, srv)
	s.mu.Unlock()
	s.wg.Add(1)
	go s.serve(srv)
	return cli, nil
}

func (s *fakeServer) serve(nc net.Conn) {
	defer s.wg.Done()
	defer nc.Close()
	rd := resp.NewReader(nc)
	var args [][]byte
	for {
		var err error
		args, _, err = rd.ReadCommand(args[:0])
		if err != nil {
			return
		}
		var reply []byte
		if strings.EqualFold(string(args[0]), "HELLO") {
			reply = resp.AppendMapHeader(nil, 2)
			reply = resp.AppendBulkString(reply, "server")
			reply = resp.AppendBulkString(reply, "redis")
			reply = resp.AppendBulkString(reply, "proto")
			reply = resp.AppendInteger(reply, 3)
		} else {
			reply = resp.AppendSimpleString(nil, "OK")
		}
		if _, err := nc.Write(reply); err != nil {
			return
		}
	}
}

// setFail makes later dials fail with err (nil: succeed).
func (s *fakeServer) setFail(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

// hold makes later dials wait for an outcome sent on the returned channel
// (nil: connect), or for their context to end.
func (s *fakeServer) hold() chan<- error {
	gate := make(chan error)
	s.mu.Lock()
	s.gate = gate
	s.mu.Unlock()
	return gate
}

// dialCount returns how many times the dial hook was called.
func (s *fakeServer) dialCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials
}

// drop closes the server side of session i (in dial order), as a server
// closing an idle client would, and waits until c has died.
func (s *fakeServer) drop(t *testing.T, i int, c *wire.Conn) {
	t.Helper()
	s.mu.Lock()
	nc := s.sessions[i]
	s.mu.Unlock()
	_ = nc.Close()
	<-c.Dead()
}

func (s *fakeServer) close() {
	s.mu.Lock()
	for _, c := range s.sessions {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// get calls p.Get and fails the test on error.
func get(t *testing.T, p *Pool) *wire.Conn {
	t.Helper()
	c, err := p.Get(context.Background())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return c
}

// getResult is the outcome of a Get on another goroutine.
type getResult struct {
	c   *wire.Conn
	err error
}

// getAsync calls p.Get(ctx) on a new goroutine; the result arrives on the
// returned channel.
func getAsync(ctx context.Context, p *Pool) <-chan getResult {
	out := make(chan getResult, 1)
	go func() {
		c, err := p.Get(ctx)
		out <- getResult{c, err}
	}()
	return out
}

// checkStats fails the test unless p's counts are want.
func checkStats(t *testing.T, p *Pool, want Stats) {
	t.Helper()
	if got := p.Stats(); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
}

// isClosedError reports whether err is the pool's closed error.
func isClosedError(err error) bool {
	var ce *wire.ConnError
	return errors.As(err, &ce) && ce.Reason == wire.Closed && ce.Evidence == wire.Unwritten &&
		errors.Is(err, wire.ErrClosed)
}
