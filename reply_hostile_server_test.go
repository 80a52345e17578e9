package respire

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/resp"
)

// hostileServer is an in-process server reached through Options.Dialer.
// It completes the handshake, echoes "ECHO sync:..." (the witness that
// replies stay in step), answers MULTI and the members of a transaction
// as Redis does, and answers every other command (EXEC included) with the
// next value of its script, or with an error reply once the script is
// used up, so that no call can loop for ever on a server that keeps
// answering.
type hostileServer struct {
	proto   int
	cluster bool // answer CLUSTER SLOTS with one node owning every slot

	mu     sync.Mutex
	script []resp.Value
	sent   int      // commands answered from the script (or past its end)
	names  []string // the commands answered from the script, for failure messages
	conns  []net.Conn
	wg     sync.WaitGroup
	closed bool
}

func newHostileServer(t testing.TB, proto int) *hostileServer {
	s := &hostileServer{proto: proto}
	t.Cleanup(s.close)
	return s
}

func (s *hostileServer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	cli, srv := net.Pipe()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("hostile server closed")
	}
	s.conns = append(s.conns, srv)
	s.wg.Go(func() { s.serve(srv) })
	return cli, nil
}

func (s *hostileServer) close() {
	s.mu.Lock()
	s.closed = true
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// load replaces the script; it returns the commands answered from the
// previous one.
func (s *hostileServer) load(script []resp.Value) (answered int, names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	answered, names = s.sent, s.names
	s.script, s.sent, s.names = script, 0, nil
	return answered, names
}

func (s *hostileServer) next(name string) resp.Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent++
	s.names = append(s.names, name)
	if len(s.script) == 0 {
		return resp.Value{Type: resp.SimpleError, Str: []byte("ERR hostile script used up")}
	}
	v := s.script[0]
	s.script = s.script[1:]
	return v
}

func (s *hostileServer) serve(nc net.Conn) {
	defer nc.Close()
	rd := resp.NewReader(nc)
	var args [][]byte
	inMulti := false
	for {
		var err error
		args, _, err = rd.ReadCommand(args[:0])
		if err != nil {
			return
		}
		if len(args) == 0 {
			continue
		}
		name := strings.ToUpper(string(args[0]))
		var out []byte
		switch {
		case name == "HELLO":
			out = resp.AppendValue(nil, resp.Value{Type: resp.Map, Elems: []resp.Value{
				bulkValue("server"), bulkValue("redis"),
				bulkValue("version"), bulkValue("7.0.15"),
				bulkValue("proto"), {Type: resp.Integer, Int: 3},
				bulkValue("id"), {Type: resp.Integer, Int: 7},
				bulkValue("mode"), bulkValue("standalone"),
				bulkValue("role"), bulkValue("master"),
				bulkValue("modules"), {Type: resp.Array},
			}}, 3)
		case name == "ECHO" && len(args) == 2 && strings.HasPrefix(string(args[1]), "sync:"):
			out = resp.AppendBulk(nil, args[1])
		case s.cluster && name == "CLUSTER" && len(args) > 1 && strings.EqualFold(string(args[1]), "SHARDS"):
			out = resp.AppendError(nil, "ERR unknown subcommand 'SHARDS'")
		case s.cluster && name == "CLUSTER":
			out = resp.AppendValue(nil, resp.Value{Type: resp.Array, Elems: []resp.Value{{Type: resp.Array, Elems: []resp.Value{
				{Type: resp.Integer, Int: 0}, {Type: resp.Integer, Int: 16383},
				{Type: resp.Array, Elems: []resp.Value{bulkValue("127.0.0.1"), {Type: resp.Integer, Int: 6379}, bulkValue("hostile")}},
			}}}}, s.proto)
		case name == "MULTI":
			inMulti = true
			out = resp.AppendSimpleString(nil, "OK")
		case inMulti && name != "EXEC" && name != "DISCARD":
			out = resp.AppendSimpleString(nil, "QUEUED")
		default:
			if name == "EXEC" || name == "DISCARD" {
				inMulti = false
			}
			if name == "CLIENT" || name == "SELECT" || name == "READONLY" || name == "AUTH" {
				out = resp.AppendSimpleString(nil, "OK") // the handshake's other steps
				break
			}
			v := s.next(name)
			for v.Type == resp.Push {
				// An out-of-band push first (RESP3; RESP2 has none): the
				// reply is what follows it.
				if s.proto == 3 {
					out = resp.AppendValue(out, v, 3)
				}
				v = s.next(name)
			}
			out = resp.AppendValue(out, v, s.proto)
		}
		if _, err := nc.Write(out); err != nil {
			return
		}
	}
}

func bulkValue(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }

// hostileClient connects to a hostile server of protocol proto.
func hostileClient(t *testing.T, proto int) (*Client, *hostileServer) {
	srv := newHostileServer(t, proto)
	c := newClient(t, Options{
		Endpoints:        []string{"hostile.invalid:6379"},
		Protocol:         proto,
		Dialer:           srv.dial,
		IdlePingInterval: NoTimeout,
	})
	return c, srv
}
