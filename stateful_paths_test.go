package respire

// Every command that changes connection state or reply pairing, on every
// public path besides Client.Do (shared_conn_test.go): Batch and
// transaction members, Tx.Do in Watch and Conn.Do in Dedicated. Each
// cell checks the documented outcome, the server's INFO commandstats
// (how many times the command ran: 0 when refused), and that the shared
// connection then still answers each caller with its own value.

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// statName is the commandstats name of the full command name
// ("CLIENT REPLY" is "client|reply").
func statName(name string) string { return strings.ToLower(strings.ReplaceAll(name, " ", "|")) }

// sharedOwnValue writes a value unique to tag on the shared connection
// and reads it back.
func sharedOwnValue(t *testing.T, c *Client, tag string) {
	t.Helper()
	ctx := testCtx(t)
	k, v := key(t, "own", tag), "value-of-"+tag
	if err := c.Set(ctx, k, v); err != nil {
		t.Fatalf("%s: SET on the shared connection: %v", tag, err)
	}
	if got, err := c.Get(ctx, k); got != v || err != nil {
		t.Fatalf("%s: GET on the shared connection = %q, %v; want %q", tag, got, err, v)
	}
}

// Every command the shared connection refuses is refused as a member of
// a batch and of a transaction too: the member and Execute fail with
// ErrInvalidArgument, nothing reaches the server, and the shared
// connection answers on.
func TestBatchMembersRefuseStateCommands(t *testing.T) {
	countsCommands(t)
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			c, px := proxiedStandalone(t, Options{Protocol: p})
			addr := standaloneAddr(t)
			ctx := testCtx(t)
			for i, tt := range refusedCalls {
				for _, tx := range []bool{false, true} {
					tag := strconv.Itoa(i) + "-" + strconv.FormatBool(tx)
					stat := statName(tt.name)
					calls := commandSeen(t, addr, stat)
					b := c.NewBatch()
					if tx {
						b = c.NewTransaction()
					}
					before := framesSent(px)
					ok := b.Set(key(t, "member", tag), "v")
					member := b.Do(tt.cmd, anys(tt.args)...)
					err := b.Execute(ctx)
					if _, merr := member.Result(); !errors.Is(merr, ErrInvalidArgument) || !strings.Contains(merr.Error(), tt.name) {
						t.Errorf("%s %v (tx %v): member = %v, want ErrInvalidArgument naming %s", tt.cmd.FullName(), tt.args, tx, merr, tt.name)
					}
					if !errors.Is(err, ErrInvalidArgument) || ok.Err() == nil {
						t.Errorf("%s %v (tx %v): Execute = %v, valid member %v; want both to fail", tt.cmd.FullName(), tt.args, tx, err, ok.Err())
					}
					if n := framesSent(px) - before; n != 0 {
						t.Errorf("%s %v (tx %v): %d frames sent, want 0", tt.cmd.FullName(), tt.args, tx, n)
					}
					if n := commandSeen(t, addr, stat) - calls; n != 0 {
						t.Errorf("%s %v (tx %v): the server ran it %d times, want 0", tt.cmd.FullName(), tt.args, tx, n)
					}
					sharedOwnValue(t, c, tag)
				}
			}
		})
	}
}

// statefulCell is a state command in one of its spellings, with the
// commandstats name it runs under.
type statefulCell struct {
	stat string
	cmd  Command
	args []string
}

// statefulCells are the state commands a dedicated connection runs (on
// any server this project tests with), in mixed spellings.
var statefulCells = []statefulCell{
	{"watch", NewCommand("watch"), []string{"k"}},
	{"unwatch", NewCommand("Unwatch"), nil},
	{"multi", NewCommand("multi"), nil},
	{"exec", NewCommand("EXEC"), nil},
	{"discard", NewCommand("discard"), nil},
	{"select", NewCommand("select"), []string{"1"}},
	{"auth", NewCommand("auth"), []string{"not-the-password"}},
	{"client|tracking", NewCommand("client"), []string{"Tracking", "on"}},
	{"client|no-evict", NewCommand("Client No-Evict"), []string{"on"}},
	{"client|setname", NewCommand("CLIENT setname"), []string{"cell"}},
	{"readonly", NewCommand("readonly"), nil},
	{"readwrite", NewCommand("ReadWrite"), nil},
	{"wait", NewCommand("wait"), []string{"0", "0"}},
}

// On a dedicated connection the state commands run, once each (an error
// reply included: AUTH with a wrong password, READONLY off a Cluster);
// through Tx.Do in Watch, MULTI, EXEC, DISCARD, UNWATCH and SELECT are
// refused before any I/O and the others run. Either way the shared
// connection answers on, and the next loan is restored.
func TestDedicatedAndWatchRunStateCommands(t *testing.T) {
	countsCommands(t)
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			c := newClient(t, Options{Protocol: p, BlockingPoolSize: 1})
			addr := standaloneAddr(t)
			ctx := testCtx(t)
			for i, cell := range statefulCells {
				for _, path := range []string{"Dedicated", "Watch"} {
					tag := strconv.Itoa(i) + "-" + path
					calls := commandSeen(t, addr, cell.stat)
					var err error
					want := 1
					if path == "Dedicated" {
						err = c.Dedicated(ctx, func(conn *Conn) error {
							_, err := conn.Do(ctx, cell.cmd, anys(cell.args)...)
							var se *ServerError
							if err != nil && !errors.As(err, &se) {
								t.Errorf("%s: Conn.Do(%s %v) = %v, want a reply", tag, cell.cmd.FullName(), cell.args, err)
							}
							return nil
						})
					} else {
						switch cell.stat {
						case "multi", "exec", "discard", "unwatch", "select":
							want = 0
						case "watch":
							want = 2 // Watch's own, then the callback's
						}
						err = c.Watch(ctx, func(tx *Tx) error {
							_, err := tx.Do(ctx, cell.cmd, anys(cell.args)...)
							var se *ServerError
							switch {
							case want == 0 && !errors.Is(err, ErrInvalidArgument):
								t.Errorf("%s: tx.Do(%s %v) = %v, want ErrInvalidArgument", tag, cell.cmd.FullName(), cell.args, err)
							case want > 0 && err != nil && !errors.As(err, &se):
								t.Errorf("%s: tx.Do(%s %v) = %v, want a reply", tag, cell.cmd.FullName(), cell.args, err)
							}
							return nil
						}, key(t, "watched", tag))
					}
					if err != nil {
						t.Errorf("%s: %v", tag, err)
					}
					if n := commandSeen(t, addr, cell.stat) - calls; n != want {
						t.Errorf("%s: the server ran %s %d times, want %d", tag, cell.stat, n, want)
					}
					sharedOwnValue(t, c, tag)
					err = c.Dedicated(ctx, func(conn *Conn) error {
						info, err := conn.Do(ctx, NewCommand("CLIENT INFO"))
						if err != nil {
							return err
						}
						text := info.v.Text()
						flags := infoField(text, "flags")
						if infoField(text, "db") != "0" || infoField(text, "name") != "" || infoField(text, "multi") != "-1" ||
							strings.ContainsAny(flags, "etrx") || (infoField(text, "resp") != "" && infoField(text, "resp") != strconv.Itoa(p)) {
							t.Errorf("%s: the next loan's connection kept state: %s", tag, text)
						}
						return nil
					})
					if err != nil {
						t.Fatalf("%s: next loan: %v", tag, err)
					}
				}
			}
		})
	}
}

// Commands that touch the whole server, not the connection, run on the
// shared connection once each, and each caller still gets its own reply:
// DEBUG SLEEP, CLIENT PAUSE (undone at once), CLIENT KILL of the
// connection's own id (SKIPME keeps it), and in RESP3 DEBUG PROTOCOL push
// and attrib, whose out-of-band push and attribute come before the reply.
func TestSharedConnectionRunsServerWideCommands(t *testing.T) {
	countsCommands(t)
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			c := newClient(t, Options{Protocol: p})
			addr := standaloneAddr(t)
			ctx := testCtx(t)
			id := clientID(t, c)
			calls := []statefulCell{
				{"debug", NewCommand("debug"), []string{"sleep", "0"}},
				{"client|pause", NewCommand("Client Pause"), []string{"1", "WRITE"}},
				{"client|unpause", NewCommand("client"), []string{"unpause"}},
				{"client|kill", NewCommand("CLIENT"), []string{"kill", "id", id}},
			}
			if p == 3 {
				calls = append(calls,
					statefulCell{"debug", NewCommand("DEBUG"), []string{"PROTOCOL", "push"}},
					statefulCell{"debug", NewCommand("DEBUG"), []string{"protocol", "attrib"}})
			}
			t.Cleanup(func() { _, _ = c.Do(testCtx(t), NewCommand("CLIENT UNPAUSE")) })
			for i, cell := range calls {
				tag := strconv.Itoa(i) + "-" + cell.stat
				before := commandSeen(t, addr, cell.stat)
				r, err := c.Do(ctx, cell.cmd, anys(cell.args)...)
				if err != nil {
					t.Fatalf("%s %v: %v", cell.cmd.FullName(), cell.args, err)
				}
				if n := commandSeen(t, addr, cell.stat) - before; n != 1 {
					t.Errorf("%s %v: the server ran it %d times, want 1", cell.cmd.FullName(), cell.args, n)
				}
				switch {
				case cell.stat == "client|kill":
					if n, err := r.Int64(); n != 0 || err != nil {
						t.Errorf("CLIENT KILL ID own = %d, %v; want 0 (SKIPME yes)", n, err)
					}
				case len(cell.args) > 0 && strings.EqualFold(cell.args[0], "protocol"):
					if s, err := r.String(); err != nil || !strings.HasPrefix(s, "Some real reply following") {
						t.Errorf("DEBUG PROTOCOL %s = %q, %v; want the reply after the out-of-band part", cell.args[1], s, err)
					}
				}
				sharedOwnValue(t, c, tag)
			}
			if got := clientID(t, c); got != id {
				t.Errorf("the shared connection is now %s, want %s: it was replaced", got, id)
			}
		})
	}
}

// A dedicated connection may redirect its tracking to the shared
// connection (CLIENT TRACKING on REDIRECT id BCAST): in RESP3 the shared
// connection then receives invalidation pushes between its replies, and
// each caller still gets its own reply.
func TestTrackingRedirectedToSharedConnection(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		id := clientID(t, c)
		err := c.Dedicated(ctx, func(conn *Conn) error {
			if _, err := conn.Do(ctx, NewCommand("CLIENT TRACKING"), "on", "REDIRECT", id, "BCAST", "PREFIX", keyPrefix(t)); err != nil {
				return err
			}
			for i := range 50 {
				sharedOwnValue(t, c, "redirected-"+strconv.Itoa(i))
			}
			concurrentOwnReplies(t, c, 200)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sharedOwnValue(t, c, "after")
	})
}

// A command without subcommands written with its first argument in its
// name (NewCommand("SELECT 1"), NewCommand("PSYNC ?")) is the command
// itself, that argument its first: a dedicated connection and Tx.Do
// refuse it as they refuse its plain spelling, before any I/O; XREAD with
// BLOCK there blocks (a connection of its own); SCAN with a cursor there
// is a continuation (never resent).
func TestStateCommandWithArgumentInItsName(t *testing.T) {
	for _, tt := range []struct {
		cmd      Command
		args     []string
		name     string
		refused  bool // on a dedicated connection
		blocking bool
		category RetryCategory
	}{
		{NewCommand("HELLO 3"), nil, "HELLO", true, false, Never},
		{NewCommand("hello 2"), []string{"SETNAME", "x"}, "HELLO", true, false, Never},
		{NewCommand("PSYNC ?"), []string{"-1"}, "PSYNC", true, false, Never},
		{NewCommand("sync x"), nil, "SYNC", true, false, Never},
		{NewCommand("MONITOR now"), nil, "MONITOR", true, false, Never},
		{NewCommand("QUIT now"), nil, "QUIT", true, false, Never},
		{NewCommand("RESET now"), nil, "RESET", true, false, Never},
		{NewCommand("XREAD block"), []string{"100", "STREAMS", "s", "$"}, "XREAD", false, true, Never},
		{NewCommand("XREAD COUNT").WithRetryCategory(ReadOnly), []string{"1", "STREAMS", "s", "0"}, "XREAD", false, false, ReadOnly},
		{NewCommand("BLPOP k"), []string{"0"}, "BLPOP", false, true, Never},
		{NewCommand("SCAN 17").WithRetryCategory(ReadOnly), nil, "SCAN", false, false, Never},
		{NewCommand("SCAN 0").WithRetryCategory(ReadOnly), nil, "SCAN", false, false, ReadOnly},
	} {
		var small [16][]byte
		f := appendCommand(nil, tt.cmd, tt.args)
		words := argWords(tt.cmd, f, small[:0])
		d := dispatchOf(tt.cmd, words)
		why := dedicatedRefusal(d.name, d.flags)
		if d.name != tt.name || (why != "") != tt.refused || d.blocking != tt.blocking || d.category != tt.category {
			t.Errorf("%s %v: name %q, dedicated refusal %q, blocking %v, category %v; want %s, refused %v, blocking %v, %v",
				tt.cmd.FullName(), tt.args, d.name, why, d.blocking, d.category, tt.name, tt.refused, tt.blocking, tt.category)
		}
		if tt.blocking {
			if _, err := blockTimeOf(d.name, d.serverArgs(tt.cmd, words)); err != nil {
				t.Errorf("%s %v: block time: %v", tt.cmd.FullName(), tt.args, err)
			}
		}
	}
	c, px := proxiedStandalone(t, Options{})
	ctx := testCtx(t)
	sent := map[string]int{}
	for _, name := range []string{"SELECT", "MULTI", "EXEC", "DISCARD", "UNWATCH"} {
		sent[name] = px.Forwarded(name)
	}
	err := c.Dedicated(ctx, func(conn *Conn) error {
		hellos := px.Forwarded("HELLO") // the connection's handshake
		if _, err := conn.Do(ctx, NewCommand("Hello 3")); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Conn.Do(HELLO 3) = %v, want ErrInvalidArgument", err)
		}
		if n := px.Forwarded("HELLO") - hellos; n != 0 {
			t.Errorf("%d HELLO frames sent, want 0", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	k := key(t, "watched")
	err = c.Watch(ctx, func(tx *Tx) error {
		for _, name := range []string{"select 1", "Multi now", "EXEC now", "discard now", "UNWATCH now"} {
			if _, err := tx.Do(ctx, NewCommand(name)); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("tx.Do(%s) = %v, want ErrInvalidArgument", name, err)
			}
		}
		return nil
	}, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"SELECT", "MULTI", "EXEC", "DISCARD", "UNWATCH"} {
		if n := px.Forwarded(name) - sent[name]; n != 0 {
			t.Errorf("%d %s frames sent, want 0", n, name)
		}
	}
	sharedOwnValue(t, c, "after")
}
