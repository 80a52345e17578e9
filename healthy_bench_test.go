package respire

import (
	"bytes"
	"context"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// echoConn is an in-memory server connection that answers every command
// at once (GET with a 64-byte value, anything else with +OK), so a
// benchmark through it measures the client's own CPU cost per command
// without the network's noise.
type echoConn struct {
	mu     sync.Mutex
	ready  sync.Cond
	out    bytes.Buffer
	closed bool
	cmds   resp.Reader
	in     bytes.Reader
	args   [][]byte
}

func newEchoConn() *echoConn {
	c := &echoConn{}
	c.ready.L = &c.mu
	return c
}

var echoValue = []byte("$64\r\n" + benchValue + "\r\n")

func (c *echoConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	c.in.Reset(p)
	c.cmds.Reset(&c.in)
	for {
		args, _, err := c.cmds.ReadCommand(c.args[:0])
		if err != nil {
			break
		}
		c.args = args
		if len(args[0]) == 3 && string(args[0]) == "GET" {
			c.out.Write(echoValue)
		} else {
			c.out.WriteString("+OK\r\n")
		}
	}
	c.ready.Broadcast()
	return len(p), nil
}

func (c *echoConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.out.Len() == 0 && !c.closed {
		c.ready.Wait()
	}
	if c.out.Len() == 0 {
		return 0, io.EOF
	}
	return c.out.Read(p)
}

func (c *echoConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.ready.Broadcast()
	c.mu.Unlock()
	return nil
}

func (c *echoConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *echoConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *echoConn) SetDeadline(time.Time) error      { return nil }
func (c *echoConn) SetReadDeadline(time.Time) error  { return nil }
func (c *echoConn) SetWriteDeadline(time.Time) error { return nil }

// inMemoryClient connects a client with opts to a new in-memory server
// (echoConn) over RESP2, closed when b ends.
func inMemoryClient(b *testing.B, opts Options) *Client {
	conn := newEchoConn()
	opts.Endpoints = []string{"127.0.0.1:6379"}
	opts.Protocol = 2
	opts.Dialer = func(context.Context, string, string) (net.Conn, error) { return conn, nil }
	c, err := Connect(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// BenchmarkHealthyPathInMemory measures the client's CPU cost of a GET
// into a caller buffer and of a SET, against an in-memory server that
// answers at once, for each retry-policy mode. Without network noise the
// nil, disabled and enabled policies can be compared to within a percent:
// run it interleaved (-count 1, repeated) and compare medians.
func BenchmarkHealthyPathInMemory(b *testing.B) {
	for _, m := range policyModes {
		b.Run(m.name, func(b *testing.B) {
			c := inMemoryClient(b, Options{RetryPolicy: m.policy()})
			ctx, buf := context.Background(), make([]byte, 0, 128)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = c.GetBytes(ctx, "k", buf[:0]); err != nil {
					b.Fatal(err)
				}
				if err = c.Set(ctx, "k", benchValue); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCommandMetricsInMemory measures what MetricsCommands adds to a
// serial GET into a caller buffer (one histogram Record through the
// OpenTelemetry SDK, with a manual reader) against the in-memory server.
func BenchmarkCommandMetricsInMemory(b *testing.B) {
	for _, v := range []struct {
		name   string
		groups MetricGroups
	}{{"off", 0}, {"commands", MetricsCommands}} {
		b.Run(v.name, func(b *testing.B) {
			c := inMemoryClient(b, Options{
				Metrics:       v.groups,
				MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
			})
			ctx, buf := context.Background(), make([]byte, 0, 128)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = c.GetBytes(ctx, "k", buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetParallelInMemory measures the client's CPU cost of a GET
// returning a string while 512 goroutines share the connection, against
// the in-memory server: the path of the reader goroutine handing replies
// to waiting callers on other CPUs, without network noise.
func BenchmarkGetParallelInMemory(b *testing.B) {
	c := inMemoryClient(b, Options{})
	ctx := context.Background()
	b.SetParallelism(max(1, 512/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Get(ctx, "k"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
