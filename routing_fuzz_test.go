package respire

import (
	"bytes"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/resp"
)

// fuzzWords splits data at NUL bytes into the arguments that follow a
// command's name (and subcommand). Every argument is a view of one
// buffer with a distinct capacity, so that argIndex can tell which
// argument a key is, empty ones included.
func fuzzWords(desc catalog.Command, data []byte) [][]byte {
	head := []string{desc.Name()}
	if sub := desc.Subcommand(); sub != "" {
		head = append(head, sub)
	}
	buf := []byte(strings.Join(head, "\x00"))
	if len(data) > 0 || len(head) > 1 {
		buf = append(buf, 0)
	}
	buf = append(append(buf, data...), 0) // a last byte: no view is empty-capacity
	var args [][]byte
	start := 0
	for i, b := range buf[:len(buf)-1] {
		if b == 0 {
			args = append(args, buf[start:i])
			start = i + 1
		}
	}
	return append(args, buf[start:len(buf)-1])
}

// argIndex returns the position in args of k, a view fuzzWords made.
func argIndex(args [][]byte, k []byte) int {
	for i, a := range args {
		if cap(a) == cap(k) {
			return i
		}
	}
	return -1
}

// addKeySeeds adds a seed per catalog command with the arguments common
// (NUL-separated), and arguments that challenge key extraction: numkeys
// negative, huge, not a number or beyond the arguments, STREAMS, KEYS,
// AUTH and STORE anywhere.
func addKeySeeds(f *testing.F, common string) {
	for i := range catalog.Len() {
		f.Add(uint16(i), []byte(common))
	}
	for _, s := range []struct {
		cmd  catalog.Command
		args string
	}{
		{catalog.Scripting.EVAL(), "s\x00-1\x00a"},
		{catalog.Scripting.EVAL(), "s\x002\x00a\x00b"},
		{catalog.Scripting.EVAL(), "s\x0099999999999999999999\x00a\x00b"},
		{catalog.Scripting.EVALSHA(), "s\x00x\x00a"},
		{catalog.Scripting.FCALL(), "f\x005\x00a"},
		{catalog.SortedSet.ZUNIONSTORE(), "d\x002\x00a"},
		{catalog.SortedSet.ZUNIONSTORE(), "d\x002\x00a\x00b\x00WEIGHTS\x001\x002"},
		{catalog.List.LMPOP(), "1\x00a\x00LEFT"},
		{catalog.String.MSETEX(), "2\x00a\x00v\x00b"},
		{catalog.Stream.XREAD(), "COUNT\x001\x00STREAMS\x00a\x00b\x00c"},
		{catalog.Stream.XREADGROUP(), "GROUP\x00g\x00STREAMS"},
		{catalog.Stream.XREADGROUP(), "GROUP\x00g\x00c\x00STREAMS\x00a\x00b\x000\x000"},
		{catalog.Generic.MIGRATE(), "h\x001\x00\x000\x001\x00AUTH\x00KEYS\x00a\x00b"},
		{catalog.Generic.MIGRATE(), "h\x001\x00\x000\x001\x00AUTH2\x00u\x00p\x00KEYS\x00a\x00b"},
		{catalog.Generic.MIGRATE(), "h\x001\x00\x000\x001\x00AUTH2\x00u"},
		{catalog.Generic.SORT(), "a\x00BY\x00p\x00LIMIT\x000\x00STORE"},
		{catalog.Generic.SORT(), "a\x00BY\x00p\x00LIMIT\x000\x001\x00GET\x00x\x00STORE\x00b"},
		{catalog.Geo.GEORADIUS(), "a\x001\x002\x003\x00km\x00STORE"},
		{catalog.Geo.GEORADIUSBYMEMBER(), "a\x00m\x001\x00km\x00STOREDIST\x00b"},
		{catalog.Cluster.CLUSTER_COUNTKEYSINSLOT(), "16384"},
	} {
		f.Add(uint16(s.cmd.Index()), []byte(s.args))
	}
}

// FuzzKeySlot: the key extraction of every catalog command, on any
// arguments (numkeys negative, huge, not a number, beyond the arguments;
// STREAMS, KEYS, STORE anywhere), never panics, visits only the
// arguments that follow the command's name, and returns the slot of one
// of them; the arguments encoded as a frame split back into themselves.
func FuzzKeySlot(f *testing.F) {
	addKeySeeds(f, "k\x00v\x00k2")
	all := catalog.All()
	f.Fuzz(func(t *testing.T, i uint16, data []byte) {
		desc := all[int(i)%len(all)]
		args := fuzzWords(desc, data)
		visitKeys(desc, args, func(k []byte) {
			if at := argIndex(args, k); at < desc.ArgPrefix() {
				t.Fatalf("%s %q: key at position %d, not an argument", desc.FullName(), args, at)
			}
		})
		slot, cross := keySlot(desc, args)
		if slot < -1 || slot >= route.Slots {
			t.Fatalf("%s %q: slot %d", desc.FullName(), args, slot)
		}
		if slot >= 0 && desc.Name() != "CLUSTER" &&
			!slices.ContainsFunc(args, func(a []byte) bool { return route.SlotBytes(a) == slot }) {
			t.Fatalf("%s %q: slot %d is no argument's", desc.FullName(), args, slot)
		}
		if cross && slot < 0 {
			t.Fatalf("%s %q: cross-slot without a slot", desc.FullName(), args)
		}
		frame := resp.AppendArrayHeader(nil, len(args))
		for _, a := range args {
			frame = resp.AppendBulk(frame, a)
		}
		words, n := nextCommand(frame, nil)
		if n != len(frame) || len(words) != len(args) {
			t.Fatalf("%q split into %q (%d of %d bytes)", frame, words, n, len(frame))
		}
		for j := range words {
			if !bytes.Equal(words[j], args[j]) {
				t.Fatalf("%q split into %q", frame, words)
			}
		}
	})
}

// FuzzFrameArgs: splitting any bytes as an encoded command never panics
// and returns only words the bytes hold.
func FuzzFrameArgs(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"))
	f.Add([]byte("*1\r\n$99999999999999999999\r\nGET\r\n"))
	f.Add([]byte("*3\r\n$3\r\nGET\r\n"))
	f.Add([]byte("*1\r\n$-1\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		words, n := nextCommand(data, nil)
		if n < 0 || n > len(data) || (n == 0 && words != nil) {
			t.Fatalf("%q: %d words, offset %d", data, len(words), n)
		}
		for _, w := range words {
			if !bytes.Contains(data, w) {
				t.Fatalf("%q: word %q not in the input", data, w)
			}
		}
	})
}

// FuzzKeySlotGetKeys: the slot and cross-slot verdict keySlot finds for a
// catalog command agree with the keys the server's COMMAND GETKEYS names
// for the same arguments, unless keySlot finds no key; arguments the
// server finds no keys in (or refuses) are never a cross-slot error, so
// that the server's own error answers them.
func FuzzKeySlotGetKeys(f *testing.F) {
	addKeySeeds(f, "{t}k\x001\x00v\x00k2")
	conn, err := net.Dial("tcp", standaloneAddr(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = conn.Close() })
	rd := resp.NewReader(conn)
	all := catalog.All()
	f.Fuzz(func(t *testing.T, i uint16, data []byte) {
		desc := all[int(i)%len(all)]
		if desc.Name() == "CLUSTER" || desc.Flags().Has(catalog.FlagPubSub) {
			// COUNTKEYSINSLOT and GETKEYSINSLOT route by their slot
			// operand, SPUBLISH and SSUBSCRIBE by their shard channels,
			// which COMMAND GETKEYS does not call keys.
			return
		}
		args := fuzzWords(desc, data)
		q := resp.AppendArrayHeader(nil, 2+len(args))
		q = resp.AppendBulkString(resp.AppendBulkString(q, "COMMAND"), "GETKEYS")
		for _, a := range args {
			q = resp.AppendBulk(q, a)
		}
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write(q); err != nil {
			t.Fatal(err)
		}
		v, err := rd.ReadValue()
		if err != nil {
			t.Fatal(err)
		}
		slot, cross := keySlot(desc, args)
		want, wantCross := -1, false
		for _, k := range v.Elems {
			s := route.SlotBytes(k.Str)
			if want >= 0 && s != want {
				wantCross = true
			}
			if want < 0 {
				want = s
			}
		}
		if v.Type != resp.Array {
			// The server refuses the arguments (arity, syntax, an unknown
			// command): any node answers that error, but the client must
			// not answer a cross-slot one first.
			if cross {
				t.Fatalf("%s %q: cross-slot; the server finds no keys: %s", desc.FullName(), args, v.Str)
			}
			return
		}
		if slot < 0 && !cross {
			// No key: any node takes the command and redirects it when the
			// server finds keys the client does not (EVAL with numkeys
			// "1A", which the server's COMMAND GETKEYS reads as 1 and its
			// EVAL refuses): slower, never wrong.
			return
		}
		if cross != wantCross || (!cross && slot != want) {
			t.Fatalf("%s %q: keySlot = %d, cross %v; the server's keys %v: slot %d, cross %v",
				desc.FullName(), args, slot, cross, v, want, wantCross)
		}
	})
}
