package catalog

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
)

// liveServer returns the address of the standalone test server.
func liveServer(t *testing.T) string { return testenv.Standalone(t) }

// reply is a RESP2 reply, decoded by the few lines below; the test does not
// depend on the client's own codec.
type reply struct {
	str string
	num int64
	arr []reply
}

func readReply(r *bufio.Reader) (reply, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return reply{}, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if len(line) == 0 {
		return reply{}, fmt.Errorf("empty line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return reply{str: body}, nil
	case '-':
		return reply{}, fmt.Errorf("server error: %s", body)
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		return reply{num: n}, err
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return reply{}, err
		}
		b := make([]byte, n+2)
		_, err = io.ReadFull(r, b)
		return reply{str: string(b[:n])}, err
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return reply{}, err
		}
		v := reply{arr: make([]reply, n)}
		for i := range v.arr {
			if v.arr[i], err = readReply(r); err != nil {
				return v, err
			}
		}
		return v, nil
	}
	return reply{}, fmt.Errorf("unexpected reply type %q", line[0])
}

func commandInfo(t *testing.T, addr string) []reply {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "*1\r\n$7\r\nCOMMAND\r\n"); err != nil {
		t.Fatal(err)
	}
	v, err := readReply(bufio.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	return v.arr
}

// serverFlagBits maps the server's flags to the catalog's flag bits.
var serverFlagBits = map[string]Flag{
	"readonly": FlagReadOnly, "write": FlagWrite, "blocking": FlagBlocking,
	"pubsub": FlagPubSub, "admin": FlagAdmin, "noscript": FlagNoScript,
	"loading": FlagLoading, "stale": FlagStale, "fast": FlagFast,
	"movablekeys": FlagMovableKeys,
}

// TestLiveCommandTable checks every command and subcommand the server
// lists against the catalog: a descriptor exists, and arity, key
// positions, server flags and ACL categories agree.
func TestLiveCommandTable(t *testing.T) {
	addr := liveServer(t)
	entries := commandInfo(t, addr)
	if len(entries) == 0 {
		t.Fatal("COMMAND returned nothing")
	}
	var check func(e reply)
	n := 0
	check = func(e reply) {
		n++
		if len(e.arr) < 10 {
			t.Errorf("short COMMAND entry: %+v", e)
			return
		}
		full := strings.ToUpper(e.arr[0].str)
		name, sub, _ := strings.Cut(full, "|")
		c, ok := Lookup(name, sub)
		if !ok || c.Name() != name || c.Subcommand() != sub {
			t.Errorf("%s %s: no descriptor (Lookup gave %q)", name, sub, c.FullName())
		} else {
			if got, want := c.Arity(), int(e.arr[1].num); got != want {
				t.Errorf("%s: arity %d, server %d", c.FullName(), got, want)
			}
			got := func() [3]int { f, l, st := c.Keys(); return [3]int{f, l, st} }()
			want := [3]int{int(e.arr[3].num), int(e.arr[4].num), int(e.arr[5].num)}
			if got != want {
				t.Errorf("%s: keys %v, server %v", c.FullName(), got, want)
			}
			var flags Flag
			for _, f := range e.arr[2].arr {
				flags |= serverFlagBits[f.str]
			}
			mask := FlagReadOnly | FlagWrite | FlagPubSub | FlagAdmin | FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagMovableKeys
			if c.Flags()&mask != flags&mask {
				t.Errorf("%s: flags %b, server %b", c.FullName(), c.Flags()&mask, flags&mask)
			}
			if flags.Has(FlagBlocking) && !c.Flags().Has(FlagBlocking) {
				t.Errorf("%s: server says blocking, catalog does not", c.FullName())
			}
			var acl []string
			for _, a := range e.arr[6].arr {
				acl = append(acl, strings.TrimPrefix(a.str, "@"))
			}
			if !slices.Equal(c.ACLCategories(), acl) {
				t.Errorf("%s: ACL categories %v, server %v", c.FullName(), c.ACLCategories(), acl)
			}
		}
		for _, s := range e.arr[9].arr {
			check(s)
		}
	}
	for _, e := range entries {
		check(e)
	}
	t.Logf("checked %d commands and subcommands against %s", n, addr)
}
