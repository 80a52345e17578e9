package respiretest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/resp"
)

// fuzzCommands are the commands FuzzServerCommands sends: the catalog's,
// but those that may wait for another client (BLPOP, WAIT) and those after
// which a PING gets no reply (CLIENT REPLY, MONITOR) or a different one.
func fuzzCommands() [][]string {
	var out [][]string
	for _, c := range catalog.All() {
		if c.Flags().Has(catalog.FlagBlocking) || slices.Contains([]string{"MONITOR", "WAIT", "WAITAOF", "SYNC", "PSYNC", "DEBUG"}, c.Name()) ||
			c.FullName() == "CLIENT REPLY" || c.FullName() == "CLIENT PAUSE" {
			continue
		}
		w := []string{c.Name()}
		if c.Subcommand() != "" {
			w = append(w, c.Subcommand())
		}
		out = append(out, w)
	}
	return out
}

// FuzzServerCommands: the embedded server answers any catalog command
// with any arguments (the IDMP emulation's XADD options and the Redis
// 7.0 fidelity hook included) without crashing or hanging: a PING after
// it on the same connection is answered.
func FuzzServerCommands(f *testing.F) {
	cmds := fuzzCommands()
	for i, c := range cmds {
		if i%8 == 0 || c[0] == "XADD" || c[0] == "SETRANGE" || c[0] == "SETBIT" {
			f.Add(uint16(i), []byte("k\x001\x00v"))
		}
	}
	for i, c := range cmds {
		if c[0] == "XADD" {
			f.Add(uint16(i), []byte("k\x00IDMP\x00p\x00i\x00*\x00f\x00v"))
			f.Add(uint16(i), []byte("k\x00MAXLEN\x00~\x00IDMPAUTO"))
		}
	}
	// The shapes that crashed the engine (TestServerRefusesEngineCrashers),
	// after the commands that create their keys.
	for _, seed := range [][2]string{
		{"SADD", "s\x00a"}, {"HSET", "h\x00f\x00v"}, {"ZADD", "z\x001\x00a"}, {"RPUSH", "l\x00a"}, {"XADD", "x\x001-1\x00f\x00v"},
		{"SRANDMEMBER", "s\x00-9223372036854775808"}, {"SRANDMEMBER", "s\x00-100000000"},
		{"HRANDFIELD", "h\x00-9223372036854775808"}, {"HRANDFIELD", "h\x00-100000000"},
		{"ZRANDMEMBER", "z\x00-9223372036854775808"}, {"ZRANDMEMBER", "z\x00-100000000"},
		{"LPOS", "l\x00a\x00COUNT\x009223372036854775807"},
		{"SSCAN", "s\x00-100000000"}, {"ZSCAN", "z\x00-1"},
		{"XTRIM", "x\x00MAXLEN\x00-1"}, {"XTRIM", "x\x00MAXLEN\x00="}, {"XTRIM", "x\x00MINID\x00~"},
		{"HEXPIRE", "h\x0010\x00FIELDS\x009223372036854775807\x00f"}, {"HEXPIRE", "h\x0010\x00NX\x00FIELDS"},
		{"EVAL", "return newproxy(true)\x000"}, {"SCRIPT LOAD", "return {newproxy()}"},
		{"EVAL", "return redis.pcall('XREAD', 'STREAMS', KEYS[1], KEYS[1], 0, 0)\x001\x00x"}, {"EVAL", "return redis.pcall('BLPOP', KEYS[1], 0)\x001\x00empty"},
		{"EVAL", "return redis.pcall('XREAD', 'BLOCK', 0, 'STREAMS', KEYS[1], '$')\x001\x00x"},
	} {
		i := slices.IndexFunc(cmds, func(c []string) bool { return strings.Join(c, " ") == seed[0] })
		if i < 0 {
			f.Fatalf("no %s in the catalog", seed[0])
		}
		f.Add(uint16(i), []byte(seed[1]))
	}
	srv := NewServer(f)
	f.Fuzz(func(t *testing.T, i uint16, data []byte) {
		cmd := cmds[int(i)%len(cmds)]
		args := append([][]byte(nil), bytesOf(cmd)...)
		if len(data) > 0 {
			args = append(args, bytes.Split(data, []byte{0})...)
		}
		frame := resp.AppendArrayHeader(nil, len(args))
		for _, a := range args {
			frame = resp.AppendBulk(frame, a)
		}
		frame = append(frame, "*1\r\n$4\r\nPING\r\n"...)
		conn, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		rd := resp.NewReader(conn)
		for range 2 {
			_, err := rd.ReadValue()
			switch {
			case errors.Is(err, os.ErrDeadlineExceeded):
				t.Fatalf("%q: no reply", args)
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
				return // QUIT, or the server hung up on the command
			case err != nil:
				t.Fatalf("%q: %v", args, err)
			}
		}
	})
}

func bytesOf(ws []string) [][]byte {
	out := make([][]byte, len(ws))
	for i, w := range ws {
		out[i] = []byte(w)
	}
	return out
}
