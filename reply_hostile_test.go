package respire

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"iter"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
	"pgregory.net/rapid"
)

// This file proves that a server's reply is input like any other: every
// typed method of *Client, every Batch and Transaction member's Future and
// every Reply converter, given any well-formed RESP2 or RESP3 value where
// it expects another shape (a proxy, a Redis-compatible server or a newer
// Redis may send one), returns a value or an error matching
// ErrUnexpectedReply, ErrNil or a *ServerError: it never panics, never
// waits for a reply that will not come, and the connection answers the
// next command with that command's own reply.

// replyWords are the words the generator puts in strings and map keys:
// the short string literals of the package's code (among them the keys
// and words its converters look for) and words that are numbers, stream
// IDs or special to a parser.
var replyWords = sync.OnceValue(func() []string {
	words := map[string]bool{}
	for _, w := range []string{
		"", "0", "1", "-1", "2", "3", "10", "1.5", "-2.5", "0.0", "inf", "-inf", "+inf", "nan", "NaN",
		"9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e400",
		"0-0", "0-1", "1-0", "1-1", "18446744073709551615-18446744073709551615", "-",
		"OK", "QUEUED", "k", "v", "m", "f", "txt:x", "a b", "\x00", "é",
		"time", "small", "f32", "2026-01-02T03:04:05Z", "300", "1e39",
	} {
		words[w] = true
	}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && len(s) <= 24 && !strings.ContainsAny(s, " \n:") {
					words[s] = true
				}
			}
			return true
		})
	}
	out := make([]string, 0, len(words))
	for w := range words {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
})

// replyKeys are the words the converters compare a reply's text with
// (the string literals of case clauses and comparisons: the keys of the
// maps they read), and the keys of hostileStruct. Map keys are drawn from
// them half of the time, so that generated maps reach the converters'
// deeper paths.
var replyKeys = sync.OnceValue(func() []string {
	words := map[string]bool{"name": true, "length": true, "count": true, "pending": true, "score": true,
		"active": true, "idle": true, "value": true, "id": true, "time": true, "small": true, "f32": true}
	lit := func(e ast.Expr) {
		if l, ok := e.(*ast.BasicLit); ok && l.Kind == token.STRING {
			if s, err := strconv.Unquote(l.Value); err == nil {
				words[s] = true
			}
		}
	}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CaseClause:
				for _, e := range n.List {
					lit(e)
				}
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					lit(n.X)
					lit(n.Y)
				}
			}
			return true
		})
	}
	out := make([]string, 0, len(words))
	for w := range words {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
})

// genWord draws a string: a known word mostly, any short string sometimes.
func genWord(t *rapid.T, label string) string {
	if rapid.IntRange(0, 9).Draw(t, label+"Any") == 9 {
		return rapid.StringN(0, 8, -1).Draw(t, label)
	}
	return rapid.SampledFrom(replyWords()).Draw(t, label)
}

var hostileInts = []int64{0, 1, -1, 2, 3, 1000, -1000, math.MaxInt64, math.MinInt64, math.MaxInt32 + 1}

var hostileFloats = []float64{0, 1, -1, 1.5, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, -math.MaxFloat64, 1e-300, 1e19, -1e19}

// genValue draws any well-formed RESP3 value, aggregates nested up to
// depth levels; pushes are drawn only where push is true (nested, where
// they are an ordinary aggregate), never at the top level.
func genValue(t *rapid.T, depth int, push bool) resp.Value {
	kinds := []resp.Type{
		resp.SimpleString, resp.SimpleError, resp.Integer, resp.BulkString, resp.Null,
		resp.Boolean, resp.Double, resp.BigNumber, resp.BulkError, resp.Verbatim,
	}
	if depth > 0 {
		// Aggregates twice, so that they are drawn about as often as scalars.
		kinds = append(kinds, resp.Array, resp.Map, resp.Set, resp.Array, resp.Map, resp.Set)
		if push {
			kinds = append(kinds, resp.Push)
		}
	}
	v := resp.Value{Type: rapid.SampledFrom(kinds).Draw(t, "type")}
	switch v.Type {
	case resp.SimpleString, resp.SimpleError, resp.BulkString, resp.BulkError, resp.Verbatim:
		v.Str = []byte(genWord(t, "str"))
		if v.Type == resp.SimpleString || v.Type == resp.SimpleError || v.Type == resp.BulkError {
			// Lines: RESP2 sends a bulk error as a simple error.
			v.Str = []byte(strings.NewReplacer("\r", "", "\n", "").Replace(string(v.Str)))
		}
		if v.Type == resp.Verbatim {
			v.Str = append([]byte("txt:"), v.Str...)
		}
	case resp.Integer:
		v.Int = rapid.SampledFrom(hostileInts).Draw(t, "int")
	case resp.Boolean:
		v.Int = int64(rapid.IntRange(0, 1).Draw(t, "bool"))
	case resp.Double:
		v.Float = rapid.SampledFrom(hostileFloats).Draw(t, "float")
	case resp.BigNumber:
		v.Str = []byte(rapid.SampledFrom([]string{"0", "1", "-1", "9223372036854775808", "-9223372036854775809", "123456789012345678901234567890"}).Draw(t, "big"))
	case resp.Array, resp.Set, resp.Push:
		n := rapid.IntRange(0, 4).Draw(t, "len")
		for range n {
			v.Elems = append(v.Elems, genValue(t, depth-1, true))
		}
	case resp.Map:
		n := rapid.IntRange(0, 4).Draw(t, "pairs")
		for range n {
			k := resp.Value{Type: resp.BulkString, Str: []byte(genWord(t, "key"))}
			if rapid.Bool().Draw(t, "knownKey") {
				k.Str = []byte(rapid.SampledFrom(replyKeys()).Draw(t, "key"))
			}
			if rapid.IntRange(0, 5).Draw(t, "oddKey") == 5 {
				k = genValue(t, depth-1, true)
			}
			v.Elems = append(v.Elems, k, genValue(t, depth-1, true))
		}
	}
	if rapid.IntRange(0, 15).Draw(t, "attrs") == 15 {
		v.Attrs = &resp.Value{Type: resp.Attribute, Elems: []resp.Value{bulkValue("key-popularity"), {Type: resp.Integer, Int: 1}}}
	}
	return v
}

// genReply draws one command's reply: sometimes preceded by an
// out-of-band push (written first by the server; RESP3 only).
func genReply(t *rapid.T) []resp.Value {
	var out []resp.Value
	if rapid.IntRange(0, 9).Draw(t, "push") == 9 {
		out = append(out, resp.Value{Type: resp.Push, Elems: []resp.Value{bulkValue("invalidate"), {Type: resp.Null}}})
	}
	return append(out, genValue(t, rapid.IntRange(0, 5).Draw(t, "depth"), false))
}

// genScript draws the replies of up to three commands (a method may send
// more than one: SCAN pages, a blocking command's retry), each wrapped
// in a one-element array sometimes (as EXEC wraps a member's reply).
func genScript(t *rapid.T) []resp.Value {
	var script []resp.Value
	for range rapid.IntRange(1, 3).Draw(t, "commands") {
		r := genReply(t)
		if rapid.IntRange(0, 3).Draw(t, "wrap") == 3 {
			last := &r[len(r)-1]
			*last = resp.Value{Type: resp.Array, Elems: []resp.Value{*last}}
		}
		script = append(script, r...)
	}
	return script
}

// hostileArg returns a valid argument of type typ: the argument
// validation of every method passes with these, so every call sends.
func hostileArg(ctx context.Context, c *Client, typ reflect.Type) reflect.Value {
	switch typ {
	case reflect.TypeFor[*Client]():
		return reflect.ValueOf(c)
	case reflect.TypeFor[*Script]():
		return reflect.ValueOf(NewScript("return 1", ScriptOptions{}))
	case reflect.TypeFor[*Function]():
		return reflect.ValueOf(NewFunction("lib", "fn", FunctionOptions{Source: "#!lua name=lib\nredis.register_function('fn', function() return 1 end)"}))
	case reflect.TypeFor[context.Context]():
		return reflect.ValueOf(ctx)
	case reflect.TypeFor[time.Duration]():
		return reflect.ValueOf(time.Second)
	case reflect.TypeFor[time.Time]():
		return reflect.ValueOf(time.Unix(2_000_000_000, 0))
	case reflect.TypeFor[BitField]():
		return reflect.ValueOf(BitField{Bits: 8})
	case reflect.TypeFor[BitFieldOp]():
		return reflect.ValueOf(BitFieldGet(BitField{Bits: 8}))
	case reflect.TypeFor[GeoSearchQuery]():
		return reflect.ValueOf(GeoSearchQuery{Member: "m", Radius: 1})
	case reflect.TypeFor[GeoMember]():
		return reflect.ValueOf(GeoMember{Member: "m", Longitude: 1, Latitude: 1})
	case reflect.TypeFor[Z]():
		return reflect.ValueOf(Z{Member: "m", Score: 1})
	case reflect.TypeFor[XCfgOptions]():
		return reflect.ValueOf(XCfgOptions{MaxSize: 1})
	case reflect.TypeFor[XPendingExtOptions]():
		return reflect.ValueOf(XPendingExtOptions{Start: "-", End: "+", Count: 1})
	case reflect.TypeFor[XTrimOptions]():
		return reflect.ValueOf(XTrimOptions{MaxLen: 1})
	case reflect.TypeFor[Command]():
		return reflect.ValueOf(NewCommand("GET"))
	}
	switch typ.Kind() {
	case reflect.String:
		return reflect.ValueOf("1").Convert(typ)
	case reflect.Int, reflect.Int64:
		return reflect.ValueOf(int64(1)).Convert(typ)
	case reflect.Float64:
		return reflect.ValueOf(1.0)
	case reflect.Bool:
		return reflect.ValueOf(true)
	case reflect.Slice:
		s := reflect.MakeSlice(typ, 2, 2)
		for i := range 2 {
			s.Index(i).Set(hostileArg(ctx, c, typ.Elem()))
		}
		return s
	case reflect.Interface: // Do's ...any
		return reflect.ValueOf("1")
	}
	return reflect.Zero(typ) // option structs, enums, nil pointers
}

// hostileArgs returns the arguments of fn, a method expression whose
// receiver is its first parameter: c for a *Client, a batch for a
// *Batch.
func hostileArgs(ctx context.Context, c *Client, fn reflect.Type, recv reflect.Value) []reflect.Value {
	in := []reflect.Value{recv}
	if !recv.IsValid() {
		in[0] = hostileArg(ctx, c, fn.In(0))
	}
	for i := 1; i < fn.NumIn(); i++ {
		in = append(in, hostileArg(ctx, c, fn.In(i)))
	}
	return in
}

// callMethod calls fn with in, the last of which is the variadic slice
// when fn has one.
func callMethod(fn reflect.Value, in []reflect.Value) []reflect.Value {
	if fn.Type().IsVariadic() {
		return fn.CallSlice(in)
	}
	return fn.Call(in)
}

// hostileSkipped are the methods the harness does not call, with why.
var hostileSkipped = map[string]string{
	"Close":          "sends nothing",
	"String":         "sends nothing",
	"GoString":       "sends nothing",
	"NewBatch":       "sends nothing; its members are covered by TestHostileRepliesBatch",
	"NewTransaction": "sends nothing; its members are covered by TestHostileRepliesBatch",
	"Dedicated":      "takes a callback: covered by TestHostileRepliesDedicatedAndWatch",
	"Watch":          "takes a callback: covered by TestHostileRepliesDedicatedAndWatch",
	"GetCached":      "needs Options.ClientCache and CLIENT TRACKING; it converts as Get",
	"DoCached":       "needs Options.ClientCache and CLIENT TRACKING; it converts as Do",
	"Subscribe":      "pub/sub is a stream of messages, not a reply per command",
	"PSubscribe":     "pub/sub is a stream of messages, not a reply per command",
	"SSubscribe":     "pub/sub is a stream of messages, not a reply per command",
}

// acceptable reports whether err is an outcome a hostile reply may give.
func acceptable(err error) bool {
	var se *ServerError
	return err == nil || errors.Is(err, ErrUnexpectedReply) || errors.Is(err, ErrNil) || errors.As(err, &se)
}

// drainSeq iterates a SCAN-style sequence to its end (the script's end
// makes it end), returning the first error.
func drainSeq[T any](seq iter.Seq2[T, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// resultError is the error of a method's results: its last result when
// that is an error, or the first error of a sequence it returned.
func resultError(out []reflect.Value) error {
	if len(out) == 0 {
		return nil
	}
	last := out[len(out)-1].Interface()
	switch x := last.(type) {
	case error:
		return x
	case nil:
		return nil
	case iter.Seq2[string, error]:
		return drainSeq(x)
	case iter.Seq2[FieldValue, error]:
		return drainSeq(x)
	case iter.Seq2[Z, error]:
		return drainSeq(x)
	case iter.Seq2[ScanPage[string], error]:
		return drainSeq(x)
	case iter.Seq2[ScanPage[FieldValue], error]:
		return drainSeq(x)
	case iter.Seq2[ScanPage[Z], error]:
		return drainSeq(x)
	}
	panic(fmt.Sprintf("hostile replies: unknown result type %T", last))
}

// hostileStruct is a Reply.Scan target with a field of each kind Scan
// fills.
type hostileStruct struct {
	S   string        `redis:"name"`
	I   int64         `redis:"length"`
	N   int           `redis:"count"`
	U   uint64        `redis:"pending"`
	F   float64       `redis:"score"`
	B   bool          `redis:"active"`
	D   time.Duration `redis:"idle"`
	Bs  []byte        `redis:"value"`
	P   *string       `redis:"id"`
	T   time.Time     `redis:"time"`
	I8  int8          `redis:"small"`
	F32 float32       `redis:"f32"`
}

// checkReplyConverters converts r with every Reply method.
func checkReplyConverters(t *rapid.T, r Reply) {
	convs := []struct {
		name string
		f    func() error
	}{
		{"Any", func() error { _, err := r.Any(); return err }},
		{"Bool", func() error { _, err := r.Bool(); return err }},
		{"Float64", func() error { _, err := r.Float64(); return err }},
		{"Float64Map", func() error { _, err := r.Float64Map(); return err }},
		{"Float64s", func() error { _, err := r.Float64s(); return err }},
		{"Int64", func() error { _, err := r.Int64(); return err }},
		{"Int64Map", func() error { _, err := r.Int64Map(); return err }},
		{"Int64s", func() error { _, err := r.Int64s(); return err }},
		{"Slice", func() error { _, err := r.Slice(); return err }},
		{"String", func() error { _, err := r.String(); return err }},
		{"StringMap", func() error { _, err := r.StringMap(); return err }},
		{"Strings", func() error { _, err := r.Strings(); return err }},
		{"Scan", func() error { var s hostileStruct; return r.Scan(&s) }},
		{"Elements", func() error { _ = r.Elements(); _ = r.IsNull(); _ = r.Value(); return nil }},
	}
	for _, c := range convs {
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("Reply.%s panicked on %s: %v", c.name, describeValue(r.Value()), p)
				}
			}()
			err = c.f()
		}()
		if !acceptable(err) {
			t.Fatalf("Reply.%s of %s: error %v matches neither ErrUnexpectedReply, ErrNil nor *ServerError", c.name, describeValue(r.Value()), err)
		}
	}
}

// describeValue shows v as its RESP3 encoding.
func describeValue(v resp.Value) string {
	return strconv.Quote(string(resp.AppendValue(nil, v, 3)))
}

func describeScript(script []resp.Value) string {
	var b strings.Builder
	for i, v := range script {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(describeValue(v))
	}
	return b.String()
}

// hostileCall is one method's call on a hostile script.
type hostileCall struct {
	out      []reflect.Value
	err      error
	answered int      // commands answered from the script
	names    []string // their names
}

// callHostile runs method m of c on script, converting a panic into a
// failure of t.
func callHostile(t *rapid.T, c *Client, srv *hostileServer, m reflect.Method, script []resp.Value) hostileCall {
	srv.load(script)
	ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout)
	defer cancel()
	var r hostileCall
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("%s panicked on %s: %v", m.Name, describeScript(script), p)
			}
		}()
		r.out = callMethod(m.Func, hostileArgs(ctx, c, m.Type, reflect.Value{}))
		r.err = resultError(r.out)
	}()
	r.answered, r.names = srv.load(nil)
	if r.answered == 0 {
		t.Fatalf("%s sent nothing (error %v): its arguments need an entry in hostileArg", m.Name, r.err)
	}
	if errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("%s hung on %s (commands %v): %v", m.Name, describeScript(script), r.names, r.err)
	}
	if !acceptable(r.err) {
		t.Fatalf("%s on %s (commands %v): error %v matches neither ErrUnexpectedReply, ErrNil nor *ServerError", m.Name, describeScript(script), r.names, r.err)
	}
	return r
}

// results formats a call's results but its error, pointers followed and
// floats spelled exactly, so that the results of two calls compare.
func (r hostileCall) results() string {
	var b strings.Builder
	for _, v := range r.out {
		if v.Type().Implements(reflect.TypeFor[error]()) || v.Kind() == reflect.Func {
			continue
		}
		formatValue(&b, v)
		b.WriteString("; ")
	}
	return b.String()
}

func formatValue(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		b.WriteString("&")
		formatValue(b, v.Elem())
	case reflect.Float32, reflect.Float64:
		b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("nil")
			return
		}
		b.WriteString("[")
		for i := range v.Len() {
			formatValue(b, v.Index(i))
			b.WriteString(" ")
		}
		b.WriteString("]")
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
		b.WriteString("map[")
		for _, k := range keys {
			formatValue(b, k)
			b.WriteString(":")
			formatValue(b, v.MapIndex(k))
			b.WriteString(" ")
		}
		b.WriteString("]")
	case reflect.Struct:
		if tm, ok := v.Interface().(time.Time); ok {
			b.WriteString(tm.UTC().Format(time.RFC3339Nano))
			return
		}
		b.WriteString(v.Type().Name() + "{")
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			b.WriteString(v.Type().Field(i).Name + ":")
			formatValue(b, v.Field(i))
			b.WriteString(" ")
		}
		b.WriteString("}")
	default:
		fmt.Fprintf(b, "%#v", v.Interface())
	}
}

// inStep checks that the connections still answer each command with its
// own reply: an ECHO of a fresh token comes back unchanged.
func inStep(t *rapid.T, c *Client, seq *int) {
	*seq++
	token := "sync:" + strconv.Itoa(*seq)
	ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout)
	defer cancel()
	got, err := c.Echo(ctx, token)
	if err != nil || got != token {
		t.Fatalf("after the hostile reply, ECHO %s = %q, %v; want its own reply", token, got, err)
	}
}

// setRapidChecks makes each rapid.Check of the test run n cases, unless
// -rapid.checks was given on the command line.
func setRapidChecks(t *testing.T, n int) {
	f := flag.Lookup("rapid.checks")
	if f == nil {
		return
	}
	given := false
	flag.Visit(func(g *flag.Flag) { given = given || g.Name == f.Name })
	if given {
		return
	}
	old := f.Value.String()
	if err := f.Value.Set(strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// hostileTimeout bounds each call: the fake server answers at once, so
// reaching it means a call waited for a reply that never comes.
const hostileTimeout = 5 * time.Second

// hostileChecks is how many generated scripts each method receives.
const hostileChecks = 100

// hostileShapeMirrors are the methods whose result mirrors the reply's
// RESP type, so RESP2 and RESP3 legitimately differ.
var hostileShapeMirrors = map[string]string{
	"Do": "Reply keeps the reply's own types (a RESP3 double is a RESP2 string)",
}

// hostileMethods returns the methods of *Client but those in
// hostileSkipped, and the methods of *Script and *Function that send
// through a *Client (named "Script.Run", ...).
func hostileMethods() []reflect.Method {
	var out []reflect.Method
	typ := reflect.TypeFor[*Client]()
	for i := range typ.NumMethod() {
		if _, skip := hostileSkipped[typ.Method(i).Name]; !skip {
			out = append(out, typ.Method(i))
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[*Script](), reflect.TypeFor[*Function]()} {
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			for j := range m.Type.NumIn() {
				if m.Type.In(j) == reflect.TypeFor[*Client]() {
					m.Name = typ.Elem().Name() + "." + m.Name
					out = append(out, m)
					break
				}
			}
		}
	}
	return out
}

// TestHostileRepliesClient calls every typed method of *Client (but
// those in hostileSkipped) with scripts of generated replies of every
// shape, over RESP3 and over RESP2 (where the server sends the same
// values as Redis would in RESP2): each call returns a value or an error
// matching ErrUnexpectedReply, ErrNil or *ServerError, none panics or
// hangs, and the next command still gets its own reply. Do's Reply goes
// through every Reply converter too. And a reply converts to the same
// value over both protocols: when the RESP3 call returns a value, the
// RESP2 call returns the same value (the converse need not hold: RESP2
// loses types, so a RESP3 set or map may be refused where its RESP2
// array is not).
func TestHostileRepliesClient(t *testing.T) {
	setRapidChecks(t, hostileChecks)
	c3, srv3 := hostileClient(t, 3)
	c2, srv2 := hostileClient(t, 2)
	covered := 0
	for _, m := range hostileMethods() {
		covered++
		t.Run(m.Name, func(t *testing.T) {
			seq := 0
			rapid.Check(t, func(rt *rapid.T) {
				script := genScript(rt)
				if seeded := seedScript(rt, m.Name); seeded != nil && rapid.Bool().Draw(rt, "seeded") {
					script = seeded
				}
				r3 := callHostile(rt, c3, srv3, m, script)
				inStep(rt, c3, &seq)
				r2 := callHostile(rt, c2, srv2, m, script)
				inStep(rt, c2, &seq)
				for _, r := range []hostileCall{r3, r2} {
					if r.err == nil && len(r.out) > 0 {
						if rep, ok := r.out[0].Interface().(Reply); ok {
							checkReplyConverters(rt, rep)
						}
					}
				}
				if _, mirrors := hostileShapeMirrors[m.Name]; mirrors || r3.err != nil {
					return
				}
				if r2.err != nil || r2.results() != r3.results() {
					rt.Fatalf("%s on %s: RESP3 gives %s <nil>, RESP2 %s %v; want the same value", m.Name, describeScript(script), r3.results(), r2.results(), r2.err)
				}
			})
		})
	}
	t.Logf("%d methods covered (*Client, *Script, *Function), %d of *Client skipped", covered, len(hostileSkipped))
}

// hostileBatchSkipped are the Batch methods that queue nothing.
var hostileBatchSkipped = map[string]string{
	"Execute": "runs the members queued by the others",
	"Len":     "queues nothing",
	"Reset":   "queues nothing",
}

// batchCall queues member m on a new batch (or transaction) of c,
// executes it on script and returns the member's Result.
func batchCall(t *rapid.T, c *Client, srv *hostileServer, m reflect.Method, tx bool, script []resp.Value) hostileCall {
	srv.load(script)
	ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout)
	defer cancel()
	b := c.NewBatch()
	if tx {
		b = c.NewTransaction()
	}
	var r hostileCall
	var execErr error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Batch.%s (transaction %v) panicked on %s: %v", m.Name, tx, describeScript(script), p)
			}
		}()
		in := hostileArgs(ctx, c, m.Type, reflect.ValueOf(b))
		fut := callMethod(m.Func, in)[0]
		execErr = b.Execute(ctx)
		r.out = fut.MethodByName("Result").Call(nil)
		r.err = resultError(r.out)
	}()
	r.answered, r.names = srv.load(nil)
	if r.answered == 0 {
		t.Fatalf("Batch.%s sent nothing (error %v): its arguments need an entry in hostileArg", m.Name, r.err)
	}
	for _, err := range []error{execErr, r.err} {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Batch.%s (transaction %v) hung on %s (commands %v): %v", m.Name, tx, describeScript(script), r.names, err)
		}
		if !acceptable(err) {
			t.Fatalf("Batch.%s (transaction %v) on %s (commands %v): error %v matches neither ErrUnexpectedReply, ErrNil nor *ServerError", m.Name, tx, describeScript(script), r.names, err)
		}
	}
	return r
}

// TestHostileRepliesBatch queues each Batch member (but those in
// hostileBatchSkipped) alone on a batch and on a transaction, over RESP3,
// and answers with generated replies (EXEC's with an array of one reply,
// or any other value): Execute and the member's Future return a value or
// an error matching ErrUnexpectedReply, ErrNil or *ServerError, nothing
// panics or hangs, and the connection stays in step. A reply a member of
// a batch accepts, the Client method of the same name (sending that one
// command) accepts too, converting it to the same value.
func TestHostileRepliesBatch(t *testing.T) {
	setRapidChecks(t, hostileChecks)
	c, srv := hostileClient(t, 3)
	typ := reflect.TypeFor[*Batch]()
	covered := 0
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		if _, skip := hostileBatchSkipped[m.Name]; skip {
			continue
		}
		covered++
		cm, hasClient := reflect.TypeFor[*Client]().MethodByName(m.Name)
		t.Run(m.Name, func(t *testing.T) {
			seq := 0
			rapid.Check(t, func(rt *rapid.T) {
				reply := genReply(rt)
				if seeded := seedScript(rt, m.Name); seeded != nil && rapid.Bool().Draw(rt, "seeded") {
					reply = seeded[:1]
				}
				rb := batchCall(rt, c, srv, m, false, reply)
				inStep(rt, c, &seq)
				if _, skip := hostileSkipped[m.Name]; hasClient && !skip && rb.err == nil {
					rc := callHostile(rt, c, srv, cm, reply)
					inStep(rt, c, &seq)
					// Compared where the results have the same types: a status
					// method returns only its error (its member a struct{}),
					// MGet and HMGet two slices (their members a struct).
					// A Client method that sends more than the member's one
					// command gets the fake server's "script used up" error.
					same := len(rc.out) == len(rb.out) && rc.out[0].Type() == rb.out[0].Type()
					if _, mirrors := hostileShapeMirrors[m.Name]; !mirrors && same && rc.answered == 1 && (rc.err != nil || rc.results() != rb.results()) {
						rt.Fatalf("%s on %s: Batch gives %s, Client %s %v; want the same value", m.Name, describeScript(reply), rb.results(), rc.results(), rc.err)
					}
				}
				exec := genReply(rt)
				if rapid.IntRange(0, 3).Draw(rt, "execShape") < 3 {
					last := &exec[len(exec)-1]
					*last = resp.Value{Type: resp.Array, Elems: []resp.Value{*last}}
				}
				batchCall(rt, c, srv, m, true, exec)
				inStep(rt, c, &seq)
			})
		})
	}
	t.Logf("%d methods of *Batch covered, %d skipped", covered, len(hostileBatchSkipped))
}

// TestHostileRepliesDedicatedAndWatch runs a command on a Dedicated
// connection, and a Watch transaction (WATCH, a read, MULTI, a queued
// write, EXEC), over RESP3 and RESP2, against generated replies to each
// step: the calls return a value or an error matching
// ErrUnexpectedReply, ErrNil, *ServerError or (Watch, for EXEC's null)
// ErrTxConflict; nothing panics or hangs, and the shared connection
// stays in step.
func TestHostileRepliesDedicatedAndWatch(t *testing.T) {
	setRapidChecks(t, hostileChecks)
	for _, proto := range []int{3, 2} {
		c, srv := hostileClient(t, proto)
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			seq := 0
			rapid.Check(t, func(rt *rapid.T) {
				script := genScript(rt)
				srv.load(script)
				ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout)
				defer cancel()
				var dedErr, watchErr error
				func() {
					defer func() {
						if p := recover(); p != nil {
							rt.Fatalf("Dedicated or Watch panicked on %s: %v", describeScript(script), p)
						}
					}()
					dedErr = c.Dedicated(ctx, func(conn *Conn) error {
						r, err := conn.Do(ctx, NewCommand("GET"), "k")
						if err == nil {
							checkReplyConverters(rt, r)
						}
						return err
					})
					srv.load(script)
					watchErr = c.Watch(ctx, func(tx *Tx) error {
						if _, err := tx.Get(ctx, "k"); err != nil && !errors.Is(err, ErrNil) {
							return err
						}
						tx.Queue().Set("k", "v")
						return nil
					}, "k")
				}()
				_, names := srv.load(nil)
				if len(names) == 0 || names[0] != "WATCH" {
					rt.Fatalf("Watch sent %v; want WATCH first", names)
				}
				for _, err := range []error{dedErr, watchErr} {
					if errors.Is(err, context.DeadlineExceeded) {
						rt.Fatalf("hung on %s (commands %v): %v", describeScript(script), names, err)
					}
					if !acceptable(err) && !errors.Is(err, ErrTxConflict) {
						rt.Fatalf("on %s (commands %v): error %v matches neither ErrUnexpectedReply, ErrNil, ErrTxConflict nor *ServerError", describeScript(script), names, err)
					}
				}
				inStep(rt, c, &seq)
			})
		})
	}
}
