package wire

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/resp"
)

// fakeServer is a small scripted RESP server reached over net.Pipe. It
// records every command it receives; handle returns the reply bytes (nil:
// never reply).
type fakeServer struct {
	handle func(args []string) []byte

	mu    sync.Mutex
	cmds  [][]string
	dials int
	conns []net.Conn
	wg    sync.WaitGroup
}

// defaultReply answers like a Redis 7 server that knows every password.
func defaultReply(args []string) []byte {
	switch strings.ToUpper(args[0]) {
	case "HELLO":
		b := resp.AppendMapHeader(nil, 2)
		b = resp.AppendBulkString(b, "server")
		b = resp.AppendBulkString(b, "redis")
		b = resp.AppendBulkString(b, "proto")
		return resp.AppendInteger(b, 3)
	case "PING":
		return resp.AppendSimpleString(nil, "PONG")
	case "ECHO":
		return resp.AppendBulkString(nil, args[1])
	}
	return resp.AppendSimpleString(nil, "OK")
}

func newFakeServer(t *testing.T, handle func(args []string) []byte) *fakeServer {
	s := &fakeServer{handle: handle}
	if s.handle == nil {
		s.handle = defaultReply
	}
	t.Cleanup(s.close)
	return s
}

// dial is a Config.Dial hook connecting to a new server session.
func (s *fakeServer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return s.dialVia(nil), nil
}

// dialVia connects to a new server session whose side of the link is
// wrap's (nil: the pipe itself).
func (s *fakeServer) dialVia(wrap func(net.Conn) net.Conn) net.Conn {
	cli, srv := net.Pipe()
	s.mu.Lock()
	s.dials++
	s.conns = append(s.conns, srv)
	s.mu.Unlock()
	s.wg.Add(1)
	if wrap != nil {
		go s.serve(wrap(srv))
	} else {
		go s.serve(srv)
	}
	return cli
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
		strs := make([]string, len(args))
		for i, a := range args {
			strs[i] = string(a)
		}
		s.mu.Lock()
		s.cmds = append(s.cmds, strs)
		s.mu.Unlock()
		if reply := s.handle(strs); reply != nil {
			if _, err := nc.Write(reply); err != nil {
				return
			}
		}
	}
}

// received returns the commands received so far, each joined by spaces.
func (s *fakeServer) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.cmds))
	for i, c := range s.cmds {
		out[i] = strings.Join(c, " ")
	}
	return out
}

// dropAll closes the server side of every session.
func (s *fakeServer) dropAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
}

func (s *fakeServer) close() {
	s.dropAll()
	s.wg.Wait()
}
