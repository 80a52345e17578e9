package catalog

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestGeneratedUpToDate fails when go generate would change the committed
// catalog_gen.go or docs/retry-categories.md.
func TestGeneratedUpToDate(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the up-to-date check needs the go tool: %v", err)
	}
	// Read the generator's inputs here so that go test's cache notices
	// when they change; the generator runs in a subprocess it cannot watch.
	inputs, _ := filepath.Glob("../internal/gen/catalog/*.go")
	inputs = append(inputs, "../internal/gen/catalog/spec/commands.json")
	for _, f := range inputs {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	out, doc := filepath.Join(dir, "catalog_gen.go"), filepath.Join(dir, "retry-categories.md")
	cmd := exec.Command(gobin, "run", "../internal/gen/catalog", "-out", out, "-doc", doc)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator: %v\n%s", err, b)
	}
	for _, f := range []struct{ got, committed string }{
		{out, "catalog_gen.go"},
		{doc, "../docs/retry-categories.md"},
	} {
		got, err := os.ReadFile(f.got)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(f.committed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./catalog and commit the result", f.committed)
		}
	}
}

// TestAuditedCategories pins the categories the audit settled.
func TestAuditedCategories(t *testing.T) {
	tests := []struct {
		cmd  Command
		want RetryCategory
	}{
		{Conn.PING(), Always},
		{Conn.ECHO(), Always},

		{Conn.CLIENT_ID(), Connection},
		{Conn.CLIENT_GETNAME(), Connection},
		{Conn.CLIENT_INFO(), Connection},
		{Server.INFO(), Connection},
		{Server.TIME(), Connection},
		{Server.ROLE(), Connection},
		{Server.LASTSAVE(), Connection},
		{Server.COMMAND(), Connection},
		{Server.COMMAND_INFO(), Connection},
		{Server.COMMAND_DOCS(), Connection},
		{Server.COMMAND_COUNT(), Connection},
		{Server.CONFIG_GET(), Connection},
		{Server.DBSIZE(), ReadOnly},

		{String.GET(), ReadOnly},
		{String.MGET(), ReadOnly},
		{Hash.HGETALL(), ReadOnly},
		{SortedSet.ZRANGE(), ReadOnly},
		{Stream.XRANGE(), ReadOnly},
		{Generic.SCAN(), ReadOnly},
		{Set.SSCAN(), ReadOnly},
		{Hash.HSCAN(), ReadOnly},
		{SortedSet.ZSCAN(), ReadOnly},

		{String.SETNX(), WriteChecked},
		{String.MSETNX(), WriteChecked},
		{Hash.HSETNX(), WriteChecked},

		{String.MSET(), WriteLastWins},
		{Hash.HSET(), WriteLastWins},
		{Hash.HMSET(), WriteLastWins},
		{List.LSET(), WriteLastWins},
		{String.SETRANGE(), WriteLastWins},
		{Bitmap.SETBIT(), WriteLastWins},

		{String.INCR(), WriteAccumulating},
		{String.INCRBY(), WriteAccumulating},
		{String.INCRBYFLOAT(), WriteAccumulating},
		{String.DECR(), WriteAccumulating},
		{String.DECRBY(), WriteAccumulating},
		{Hash.HINCRBY(), WriteAccumulating},
		{String.APPEND(), WriteAccumulating},
		{List.LPUSH(), WriteAccumulating},
		{List.RPOPLPUSH(), WriteAccumulating},
		{Set.SPOP(), WriteAccumulating},
		{Stream.XADD(), WriteAccumulating},
		{PubSub.PUBLISH(), WriteAccumulating},
		{Generic.DEL(), WriteAccumulating},
		{Generic.EXPIRE(), WriteAccumulating},
		{String.SET(), WriteAccumulating},
		{SortedSet.ZADD(), WriteAccumulating},

		{Server.FLUSHALL(), ServerAdmin},
		{Server.CONFIG_SET(), ServerAdmin},
		{Scripting.SCRIPT_LOAD(), ServerAdmin},
		{Scripting.FUNCTION_LOAD(), ServerAdmin},
		{Conn.CLIENT_KILL(), ServerAdmin},
		{Server.REPLICAOF(), ServerAdmin},
		{Server.FAILOVER(), ServerAdmin},

		{Scripting.EVAL(), Never},
		{Scripting.EVALSHA(), Never},
		{Scripting.EVAL_RO(), Never},
		{Scripting.EVALSHA_RO(), Never},
		{Scripting.FCALL(), Never},
		{Scripting.FCALL_RO(), Never},
		{Transactions.MULTI(), Never},
		{Transactions.EXEC(), Never},
		{Transactions.WATCH(), Never},
		{PubSub.SUBSCRIBE(), Never},
		{PubSub.PSUBSCRIBE(), Never},
		{PubSub.SSUBSCRIBE(), Never},
		{PubSub.UNSUBSCRIBE(), Never},
		{Conn.AUTH(), Never},
		{Conn.HELLO(), Never},
		{Conn.SELECT(), Never},
		{List.BLPOP(), Never},
		{List.BRPOP(), Never},
		{List.BLMOVE(), Never},
		{SortedSet.BZPOPMIN(), Never},
		{Stream.XREAD(), Never},
		{Stream.XREADGROUP(), Never},
		{Generic.WAIT(), Never},
		{New("NOSUCHCOMMAND"), 0},

		// A sample across the families, as the spec's category
		// definitions read them: a repeat that only re-checks its
		// condition is WriteChecked; one that reads, ReadOnly; one that
		// adds up, consumes, moves, or loses its original reply,
		// WriteAccumulating; blocking and containers, Never.
		{String.GETDEL(), WriteAccumulating},
		{String.GETSET(), WriteAccumulating},
		{String.GETEX(), WriteAccumulating},
		{String.SETEX(), WriteAccumulating},
		{String.STRLEN(), ReadOnly},
		{List.RPUSH(), WriteAccumulating},
		{List.LPOP(), WriteAccumulating},
		{List.LMOVE(), WriteAccumulating},
		{List.LMPOP(), WriteAccumulating},
		{List.LINSERT(), WriteAccumulating},
		{List.LRANGE(), ReadOnly},
		{Set.SADD(), WriteChecked},
		{Set.SREM(), WriteAccumulating},
		{Set.SMOVE(), WriteAccumulating},
		{Set.SRANDMEMBER(), ReadOnly},
		{Set.SMEMBERS(), ReadOnly},
		{SortedSet.ZINCRBY(), WriteAccumulating},
		{SortedSet.ZPOPMIN(), WriteAccumulating},
		{SortedSet.ZRANGESTORE(), WriteAccumulating},
		{SortedSet.ZRANDMEMBER(), ReadOnly},
		{Hash.HDEL(), WriteAccumulating},
		{Hash.HINCRBYFLOAT(), WriteAccumulating},
		{Hash.HGETDEL(), WriteAccumulating},
		{Hash.HRANDFIELD(), ReadOnly},
		{Stream.XDEL(), WriteAccumulating},
		{Stream.XTRIM(), WriteAccumulating},
		{Stream.XACK(), WriteAccumulating},
		{Stream.XCLAIM(), WriteAccumulating},
		{Stream.XLEN(), ReadOnly},
		{Stream.XINFO_STREAM(), ReadOnly},
		{Generic.COPY(), WriteAccumulating},
		{Generic.RENAME(), WriteAccumulating},
		{Generic.UNLINK(), WriteAccumulating},
		{Generic.PEXPIRE(), WriteAccumulating},
		{Generic.PERSIST(), WriteAccumulating},
		{Generic.TTL(), ReadOnly},
		{Generic.EXISTS(), ReadOnly},
		{Generic.OBJECT_ENCODING(), ReadOnly},
		{Generic.OBJECT(), Never},
		{Generic.SORT_RO(), ReadOnly},
		{Generic.WAITAOF(), Never},
		{Geo.GEOADD(), WriteAccumulating},
		{Geo.GEORADIUS(), WriteAccumulating},
		{Geo.GEOSEARCHSTORE(), WriteAccumulating},
		{Geo.GEOSEARCH(), ReadOnly},
		{Geo.GEODIST(), ReadOnly},
		{Bitmap.BITFIELD(), WriteAccumulating},
		{Bitmap.BITOP(), WriteAccumulating},
		{Bitmap.BITFIELD_RO(), ReadOnly},
		{Bitmap.BITCOUNT(), ReadOnly},
		{HyperLogLog.PFADD(), WriteChecked},
		{HyperLogLog.PFMERGE(), WriteAccumulating},
		{HyperLogLog.PFCOUNT(), ReadOnly},
		{PubSub.SPUBLISH(), WriteAccumulating},
		{PubSub.PUBSUB_CHANNELS(), Connection},
		{Server.FLUSHDB(), ServerAdmin},
		{Server.MEMORY_USAGE(), ReadOnly},
		{Scripting.FUNCTION_DELETE(), ServerAdmin},
	}
	for _, tt := range tests {
		if got := tt.cmd.Category(); got != tt.want {
			t.Errorf("%s: category %v, want %v", tt.cmd.FullName(), got, tt.want)
		}
		if tt.cmd.Declared() {
			t.Errorf("%s: Declared() = true for an audited descriptor", tt.cmd.FullName())
		}
		if tt.want == 0 {
			if tt.cmd.Category().Retryable() {
				t.Errorf("%s: unknown command is retryable", tt.cmd.FullName())
			}
			continue
		}
		got, ok := Lookup(tt.cmd.Name(), tt.cmd.Subcommand())
		if !ok || got.FullName() != tt.cmd.FullName() || got.Category() != tt.want {
			t.Errorf("Lookup(%q, %q) = %s %v, %v; want %s %v", tt.cmd.Name(), tt.cmd.Subcommand(), got.FullName(), got.Category(), ok, tt.cmd.FullName(), tt.want)
		}
	}
}

func TestDispatchFlags(t *testing.T) {
	tests := []struct {
		cmd  Command
		want Flag
	}{
		{Conn.HELLO(), FlagConnectionState},
		{Conn.AUTH(), FlagConnectionState},
		{Conn.SELECT(), FlagConnectionState},
		{Conn.RESET(), FlagConnectionState},
		{Conn.QUIT(), FlagConnectionState},
		{Conn.CLIENT_SETNAME(), FlagConnectionState},
		{Conn.CLIENT_SETINFO(), FlagConnectionState},
		{Conn.CLIENT_TRACKING(), FlagConnectionState},
		{Conn.CLIENT_REPLY(), FlagConnectionState},
		{Conn.CLIENT_CACHING(), FlagConnectionState},
		{Conn.CLIENT_NO_EVICT(), FlagConnectionState},
		{Conn.CLIENT_NO_TOUCH(), FlagConnectionState},
		{Cluster.READONLY(), FlagConnectionState},
		{Cluster.READWRITE(), FlagConnectionState},
		{Cluster.ASKING(), FlagConnectionState},
		{Scripting.EVAL(), FlagScripting},
		{Scripting.EVALSHA_RO(), FlagScripting},
		{Scripting.FCALL(), FlagScripting},
		{Scripting.FCALL_RO(), FlagScripting},
		{Transactions.MULTI(), FlagTransaction},
		{Transactions.EXEC(), FlagTransaction},
		{Transactions.DISCARD(), FlagTransaction},
		{Transactions.WATCH(), FlagTransaction},
		{Transactions.UNWATCH(), FlagTransaction},
		{Generic.SCAN(), FlagCursor | FlagReadOnly},
		{Set.SSCAN(), FlagCursor | FlagReadOnly},
		{Hash.HSCAN(), FlagCursor | FlagReadOnly},
		{SortedSet.ZSCAN(), FlagCursor | FlagReadOnly},
		{List.BLPOP(), FlagBlocking | FlagWrite},
		{Stream.XREADGROUP(), FlagBlocking | FlagWrite | FlagMovableKeys},
		{Generic.WAIT(), FlagBlocking},
		{PubSub.SUBSCRIBE(), FlagPubSub},
		{String.GET(), FlagReadOnly | FlagFast},
		{String.SET(), FlagWrite},
		{Server.CONFIG_SET(), FlagAdmin | FlagNoScript | FlagLoading | FlagStale},
	}
	for _, tt := range tests {
		if !tt.cmd.Flags().Has(tt.want) {
			t.Errorf("%s: flags %b, want %b set", tt.cmd.FullName(), tt.cmd.Flags(), tt.want)
		}
	}
	if Generic.SCAN().Flags().Has(FlagWrite) || String.GET().Flags().Has(FlagCursor) {
		t.Error("unexpected flags on SCAN or GET")
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name, sub string
		want      string
		ok        bool
	}{
		{"get", "", "GET", true},
		{"GeT", "ignored", "GET", true},
		{"config", "set", "CONFIG SET", true},
		{"CONFIG", "", "CONFIG", true},
		{"config", "nosuch", "CONFIG", true},
		{"client", "no-evict", "CLIENT NO-EVICT", true},
		{"xcfgset", "", "XCFGSET", true},
		{"hgetex", "", "HGETEX", true},
		{"nosuch", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		got, ok := Lookup(tt.name, tt.sub)
		if ok != tt.ok || got.FullName() != tt.want {
			t.Errorf("Lookup(%q, %q) = %q, %v; want %q, %v", tt.name, tt.sub, got.FullName(), ok, tt.want, tt.ok)
		}
	}
	if got, _ := Lookup("config", "nosuch"); got.Category().Retryable() {
		t.Errorf("container CONFIG is retryable: %v", got.Category())
	}
}

// TestGroupsCoverTable checks that every descriptor appears in exactly one
// group field with a matching name, and that All is sorted and complete.
func TestGroupsCoverTable(t *testing.T) {
	all := All()
	if len(all) != len(table) {
		t.Fatalf("All() returned %d descriptors, want %d", len(all), len(table))
	}
	if !slices.IsSortedFunc(all, func(a, b Command) int {
		if c := strings.Compare(a.Name(), b.Name()); c != 0 {
			return c
		}
		return strings.Compare(a.Subcommand(), b.Subcommand())
	}) {
		t.Error("All() is not sorted")
	}
	seen := map[string]string{}
	for _, g := range []any{Bitmap, Cluster, Conn, Generic, Geo, Hash, HyperLogLog, List, PubSub, Scripting, Server, Set, SortedSet, Stream, String, Transactions} {
		v := reflect.ValueOf(g)
		if v.NumField() != 0 {
			t.Errorf("%s has fields: an importer could change them", v.Type().Name())
		}
		for i := range v.NumMethod() {
			m := v.Type().Method(i)
			c := v.Method(i).Call(nil)[0].Interface().(Command)
			field := strings.NewReplacer(" ", "_", "-", "_", ".", "_").Replace(c.FullName())
			if m.Name != field {
				t.Errorf("%s.%s returns %s", v.Type().Name(), m.Name, c.FullName())
			}
			if prev, dup := seen[c.FullName()]; dup {
				t.Errorf("%s in %s and %s", c.FullName(), prev, v.Type().Name())
			}
			seen[c.FullName()] = v.Type().Name()
		}
	}
	for _, c := range All() {
		if _, ok := seen[c.FullName()]; !ok {
			t.Errorf("%s is in no group", c.FullName())
		}
		if !c.Category().Valid() {
			t.Errorf("%s has no valid category", c.FullName())
		}
		if c.Since() == "" || c.Group() == "" || c.Arity() == 0 || c.Origin() == "" {
			t.Errorf("%s lacks facts: %+v", c.FullName(), c)
		}
		if c.Flags().Has(FlagBlocking) || c.Flags().Has(FlagConnectionState) || c.Flags().Has(FlagScripting) || c.Flags().Has(FlagTransaction) {
			if c.Category() != Never {
				t.Errorf("%s: dispatch-excluded command has category %v", c.FullName(), c.Category())
			}
		}
	}
}

// TestDescriptorsImmutable checks that nothing an importer can do to a
// Command it holds changes what the catalog says: copies carry their own
// declarations, and ACL categories come back as copies.
func TestDescriptorsImmutable(t *testing.T) {
	get := String.GET()
	_ = get.WithRetryCategory(ServerAdmin).WithFlags(FlagBlocking)
	acl := get.ACLCategories()
	acl[0] = "CHANGED"
	String = StringCommands{} // the group has no state to replace
	again := String.GET()
	if again.Category() != ReadOnly || again.Flags().Has(FlagBlocking) || again.ACLCategories()[0] == "CHANGED" {
		t.Errorf("GET changed: %v %b %v", again.Category(), again.Flags(), again.ACLCategories())
	}
	if got, _ := Lookup("GET", ""); got != again {
		t.Errorf("Lookup(GET) = %+v, want %+v", got, again)
	}
	declared := get.WithFlags(FlagConnectionState)
	if !declared.Flags().Has(FlagConnectionState|FlagReadOnly) || declared.Category() != ReadOnly {
		t.Errorf("WithFlags: %b %v", declared.Flags(), declared.Category())
	}
	var zero Command
	if zero.Name() != "" || zero.FullName() != "" || zero.Category() != 0 || zero.Flags() != 0 {
		t.Errorf("zero Command describes %q", zero.FullName())
	}
}

func TestWithRetryCategoryOnDescriptor(t *testing.T) {
	set := String.SET().WithRetryCategory(WriteLastWins)
	if set.Category() != WriteLastWins || !set.Declared() {
		t.Errorf("declared SET = %v, %v", set.Category(), set.Declared())
	}
	if String.SET().Category() != WriteAccumulating || String.SET().Declared() {
		t.Error("declaring changed the catalog's SET")
	}
}
