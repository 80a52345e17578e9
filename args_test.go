package respire

import (
	"errors"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
)

type userID string

type point struct{ x, y int }

func (p point) String() string { return "(" + itoa(p.x) + "," + itoa(p.y) + ")" }

func itoa(n int) string { return string(rune('0' + n)) }

type failingMarshaler struct{}

func (failingMarshaler) MarshalBinary() ([]byte, error) { return nil, errors.New("no bytes") }

// TestDoArgumentTypes: Do encodes every supported argument type as Redis
// reads it back (ECHO returns the argument's bytes), and refuses every
// other type before any I/O, naming the argument. A nil pointer to a
// supported type is refused too: calling its MarshalBinary or String
// would panic.
func TestDoArgumentTypes(t *testing.T) {
	c, px := proxiedStandalone(t, Options{})
	ctx := testCtx(t)
	echo := catalog.Conn.ECHO()
	for _, tc := range []struct {
		arg  any
		want string
	}{
		{"text", "text"},
		{[]byte("raw\x00bytes"), "raw\x00bytes"},
		{42, "42"},
		{int8(-8), "-8"},
		{int16(-16), "-16"},
		{int32(-32), "-32"},
		{int64(math.MinInt64), "-9223372036854775808"},
		{uint(7), "7"},
		{uint8(255), "255"},
		{uint16(65535), "65535"},
		{uint32(1 << 31), "2147483648"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{1.5, "1.5"},
		{float32(0.25), "0.25"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{true, "1"},
		{false, "0"},
		{1500 * time.Millisecond, "1500"},
		{netip.MustParseAddr("127.0.0.1"), "\x7f\x00\x00\x01"}, // encoding.BinaryMarshaler
		{point{1, 2}, "(1,2)"},                                 // fmt.Stringer
		{userID("u1"), "u1"},                                   // a named string
	} {
		r, err := c.Do(ctx, echo, tc.arg)
		if got, _ := r.String(); err != nil || got != tc.want {
			t.Errorf("ECHO %T(%v) = %q, %v; want %q", tc.arg, tc.arg, got, err, tc.want)
		}
	}
	for _, bad := range []any{nil, struct{}{}, []int{1}, map[string]string{}, failingMarshaler{}, make(chan int),
		(*time.Time)(nil), (*netip.Addr)(nil), (*point)(nil)} {
		before := framesSent(px)
		_, err := c.Do(ctx, echo, bad)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "argument 1") {
			t.Errorf("ECHO %T = %v, want an ErrInvalidArgument naming argument 1", bad, err)
		}
		if n := framesSent(px) - before; n != 0 {
			t.Errorf("ECHO %T sent %d frames", bad, n)
		}
	}
	b := c.NewBatch()
	ok := b.Get(keyPrefix(t) + "k")
	b.Do(echo, struct{}{})
	if err := b.Execute(ctx); !errors.Is(err, ErrInvalidArgument) || !errors.Is(ok.Err(), ErrInvalidArgument) {
		t.Errorf("batch with a bad argument: %v, %v; want ErrInvalidArgument, nothing sent", err, ok.Err())
	}
}

// TestDoArgumentAllocations: Do with constant string and small integer
// arguments allocates only its reply (and the raw command's dispatch
// record); the argument encoding itself allocates nothing.
func TestDoArgumentAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := newClient(t, Options{})
	ctx := testCtx(t)
	set := catalog.String.SET()
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), "respire:alloc:k") }) // a constant key: a variable one would be boxed
	op := func() {
		if _, err := c.Do(ctx, set, "respire:alloc:k", 7); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		op()
	}
	// Per call: the reply's owned copy and the dispatch spec. The runtime
	// also allocates now and then while the connection's reader parks and
	// wakes (a sudog for the channel it waits on: 20-130 in 2,000 calls
	// here, with or without this package's changes), so the average is
	// taken whole, as testing.AllocsPerRun does: an argument encoding that
	// allocated would make it 3.
	if got := testing.AllocsPerRun(2000, op); got > 2 {
		t.Errorf("%v allocations per call, want at most 2", got)
	}
}
