package resp

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"strconv"
)

// Default limits of a [Reader].
const (
	// DefaultMaxBulk is the default largest bulk payload, 512 MiB, as in Redis.
	DefaultMaxBulk = 512 << 20
	// DefaultMaxDepth is the default deepest nesting of aggregates. A
	// Redis script can return nearly 8000 levels (a Lua table nested in a
	// table, to the Lua stack's limit), and such a reply must not read as
	// a broken stream.
	DefaultMaxDepth = 8192
	// MaxLine is the longest header or simple line a reader accepts,
	// 64 KiB like Redis's inline limit.
	MaxLine = 64 << 10
)

const (
	initialBufSize  = 32 << 10
	retainBufSize   = 1 << 20
	maxAdaptiveBuf  = 512 << 10 // growth after repeated full reads stops here
	eagerAggregate  = 64        // aggregates up to this length reserve slots up front...
	eagerSlots      = 4096      // ...while a top-level value has reserved fewer than this
	minValueLen     = 3         // the shortest encoded value, "_\r\n"
	retainArenaSize = 1 << 16
	maxAggregateLen = 1 << 40
	maxEmptyReads   = 100
)

// ErrProtocol is wrapped by every error that reports malformed or
// disallowed input. After such an error the stream cannot be resynchronised:
// the reader keeps returning it.
var ErrProtocol = errors.New("resp: protocol error")

// Limit errors, each also matching [ErrProtocol] with errors.Is. A line
// (header or simple value, without its CRLF) may be at most [MaxLine]
// bytes long.
var (
	ErrBulkTooLarge = &ProtocolError{Reason: "bulk length exceeds the reader's limit"}
	ErrTooDeep      = &ProtocolError{Reason: "aggregates nested deeper than the reader's limit"}
	ErrLineTooLong  = &ProtocolError{Reason: "line longer than 64 KiB"}
)

// ProtocolError describes malformed input. It matches [ErrProtocol]. The
// library does not change it once returned, so it is safe for concurrent
// use.
type ProtocolError struct {
	Reason string
	kind   *ProtocolError
}

// Error describes what in the stream broke the protocol.
func (e *ProtocolError) Error() string { return "resp: protocol error: " + e.Reason }

// Is reports whether target is [ErrProtocol] or the limit error e stands for.
func (e *ProtocolError) Is(target error) bool {
	return target == ErrProtocol || (e.kind != nil && target == e.kind)
}

func protocolError(reason string) error { return &ProtocolError{Reason: reason} }

func limitError(kind *ProtocolError, detail string) error {
	return &ProtocolError{Reason: kind.Reason + " (" + detail + ")", kind: kind}
}

// Reader decodes RESP values from an io.Reader through its own buffer.
// Values it returns borrow its memory until the next Read call.
// A Reader is not safe for concurrent use.
type Reader struct {
	// MaxBulk is the largest accepted bulk payload in bytes; larger
	// announced lengths fail with [ErrBulkTooLarge] before anything is
	// allocated. Zero or less means [DefaultMaxBulk].
	MaxBulk int64
	// MaxDepth is the deepest accepted nesting of aggregates. Zero or less
	// means [DefaultMaxDepth].
	MaxDepth int

	rd       io.Reader
	buf      []byte
	r, w     int  // unread bytes are buf[r:w]
	mark     int  // where the current top-level value starts
	in       bool // inside a top-level value
	borrowed bool // the current value has handed out slices of buf
	spare    []byte
	spareSeq uint64 // value sequence in which spare was last borrowed
	seq      uint64
	// fullReads counts consecutive reads that filled at least half the
	// buffer; two in a row double the buffer at the next value boundary.
	fullReads int
	arena     []Value
	used      int   // arena slots used since the arena was made
	reserved  int64 // element slots reserved by the current top-level value
	err       error
}

// NewReader returns a Reader reading from rd with the default limits.
func NewReader(rd io.Reader) *Reader { return &Reader{rd: rd} }

// Reset discards all state and makes the reader read from rd, keeping its
// buffers and limits.
func (r *Reader) Reset(rd io.Reader) {
	r.rd, r.r, r.w, r.mark, r.in, r.used, r.reserved, r.err = rd, 0, 0, 0, false, 0, 0, nil
}

// Buffered returns how many bytes are buffered and not yet decoded.
func (r *Reader) Buffered() int { return r.w - r.r }

// Shrink lets go of the memory the reader grew for large input (a
// buffer over 1 MiB, or the element slots of a large aggregate) when it
// holds no unread byte and is between values, as it does anyway when the
// next value starts: a reader that then waits long for input keeps only
// a small buffer meanwhile. Values returned earlier stay valid (their
// memory is not reused). It costs two comparisons when nothing is large.
func (r *Reader) Shrink() {
	if len(r.buf) > retainBufSize || len(r.arena) > retainArenaSize {
		r.shrink()
	}
}

func (r *Reader) shrink() {
	if r.in || r.r != r.w {
		return
	}
	// fill allocates a buffer of the initial size for the next input.
	r.buf, r.spare, r.r, r.w, r.mark, r.fullReads = nil, nil, 0, 0, 0, 0
	if len(r.arena) > retainArenaSize {
		r.arena, r.used = nil, 0
	}
}

// NextBuffered reports whether the next value is a scalar (simple string,
// error, number, null, boolean, double, big number or bulk string) whose
// every byte is already buffered, so that reading it needs no I/O. It
// decodes nothing, and it answers false when unsure: for aggregates,
// attributes and pushes, for partial input, and after an error.
func (r *Reader) NextBuffered() bool {
	if r.err != nil {
		return false
	}
	b := r.buf[r.r:r.w]
	if len(b) < 3 {
		return false
	}
	i := bytes.IndexByte(b[:min(len(b), MaxLine+2)], '\n')
	if i < 2 || b[i-1] != '\r' {
		return false
	}
	switch b[0] {
	case '+', '-', ':', '_', '#', ',', '(':
		return true
	case '$', '!', '=':
		n, ok := parseSmallLen(b[1 : i-1])
		if !ok {
			return false
		}
		return n < 0 || len(b)-(i+1) >= n+2
	}
	return false
}

// parseSmallLen parses a bulk length header: -1 or a decimal of at most
// nine digits (larger lengths answer false, which [Reader.NextBuffered]
// reads as "unsure").
func parseSmallLen(b []byte) (int, bool) {
	if len(b) == 2 && b[0] == '-' && b[1] == '1' {
		return -1, true
	}
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// ReadValue decodes the next value. At a clean end of input it returns
// io.EOF; inside a value, io.ErrUnexpectedEOF. Errors are final, except a
// read that failed with [os.ErrDeadlineExceeded]: the next call decodes
// the interrupted value again from its start.
func (r *Reader) ReadValue() (Value, error) {
	v, _, err := r.ReadValueRaw()
	return v, err
}

// ReadValueRaw is [Reader.ReadValue] that also returns the value's encoded
// bytes exactly as received, borrowed like the value.
func (r *Reader) ReadValueRaw() (Value, []byte, error) {
	if r.err != nil {
		return Value{}, nil, r.err
	}
	r.begin()
	v, err := r.readValue(0)
	r.in = false
	if err != nil {
		return Value{}, nil, r.fail(err)
	}
	return v, r.buf[r.mark:r.r], nil
}

// fail ends the current top-level value with err and returns the error to
// report. A read deadline is not a broken stream: the next call reads the
// value again from its first byte, which is still buffered. Other errors
// are final.
func (r *Reader) fail(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		r.r = r.mark
		return err
	}
	if err == io.EOF && r.w != r.mark {
		err = io.ErrUnexpectedEOF
	}
	r.err = err
	return err
}

// ReadCommand decodes the next client command, an array of bulk strings or
// an inline command line (arguments separated by spaces or tabs, no
// quoting), appending its arguments to args. Blank inline lines are
// skipped, as Redis does. The arguments and raw (the command's bytes as
// received) borrow the reader's memory. A command of another shape is a
// protocol error; on error args is returned unchanged. As with
// [Reader.ReadValue], errors are final except a read deadline: the next
// call reads the interrupted command again from its start.
func (r *Reader) ReadCommand(args [][]byte) (out [][]byte, raw []byte, err error) {
	for {
		if r.err != nil {
			return args, nil, r.err
		}
		r.begin()
		if err := r.ensure(1); err != nil {
			r.in = false
			return args, nil, r.fail(err)
		}
		if r.buf[r.r] == '*' {
			r.in = false
			return r.readArrayCommand(args)
		}
		line, err := r.readLine()
		r.in = false
		if err != nil {
			return args, nil, r.fail(err)
		}
		n := len(args)
		args = appendFields(args, line)
		if len(args) > n {
			r.borrowed = true
			return args, r.buf[r.mark:r.r], nil
		}
		// Redis ignores blank inline lines; so do we.
	}
}

func (r *Reader) readArrayCommand(args [][]byte) ([][]byte, []byte, error) {
	v, raw, err := r.ReadValueRaw()
	if err != nil {
		return args, nil, err
	}
	if v.Type != Array || len(v.Elems) == 0 {
		r.err = protocolError("command is not a non-empty array")
		return args, nil, r.err
	}
	for _, e := range v.Elems {
		if e.Type != BulkString {
			r.err = protocolError("command argument is not a bulk string")
			return args, nil, r.err
		}
	}
	for _, e := range v.Elems {
		args = append(args, e.Str)
	}
	return args, raw, nil
}

// appendFields appends the space- or tab-separated fields of an inline
// command line to args.
func appendFields(args [][]byte, line []byte) [][]byte {
	start := -1
	for i, c := range line {
		if c == ' ' || c == '\t' {
			if start >= 0 {
				args = append(args, line[start:i:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		args = append(args, line[start:len(line):len(line)])
	}
	return args
}

// begin starts a top-level value: earlier borrowed memory may be reused.
func (r *Reader) begin() {
	if r.r == r.w {
		r.r, r.w = 0, 0
	}
	if len(r.buf) > retainBufSize && r.w-r.r < initialBufSize {
		nb := make([]byte, initialBufSize)
		r.w = copy(nb, r.buf[r.r:r.w])
		r.buf, r.r, r.spare = nb, 0, nil
	}
	if r.fullReads >= 2 && len(r.buf) < maxAdaptiveBuf {
		// Reads keep filling the buffer: the peer sends faster than we
		// read in one call. A larger buffer means fewer read calls.
		nb := make([]byte, 2*len(r.buf))
		r.w = copy(nb, r.buf[r.r:r.w])
		r.buf, r.r, r.spare, r.fullReads = nb, 0, nil, 0
	}
	if len(r.arena) > retainArenaSize {
		r.arena = nil
	}
	r.seq++
	r.used = 0
	r.reserved = 0
	r.mark = r.r
	r.in = true
	r.borrowed = false
}

// ensure makes at least n unread bytes available.
func (r *Reader) ensure(n int) error {
	for r.w-r.r < n {
		if err := r.fill(n, 0); err != nil {
			return err
		}
	}
	return nil
}

// ensureBulk is [Reader.ensure] for a payload whose announced length is not
// trusted: the buffer grows with what arrives, at most doubling each time,
// so a peer announcing a large bulk and sending little gets little memory,
// and never past the bulk's end: a bulk that has half arrived gets a
// buffer its size, not twice the last one.
func (r *Reader) ensureBulk(n int) error {
	for r.w-r.r < n {
		want := min(n, max(2*(r.w-r.r), initialBufSize))
		if err := r.fill(want, n); err != nil {
			return err
		}
	}
	return nil
}

// fill reads more input, first making room for n unread bytes; a buffer
// that grows for them grows to at most most unread bytes, when most is
// not 0 (a bulk's end). Bytes of the current value that were handed out
// are never moved in place: the value moves to the spare buffer (or a new
// one) instead, and the old buffer becomes the spare once the next value
// starts, unless it is over 1 MiB (begin would drop it anyway: dropped
// now, it can be collected while a large value still arrives).
func (r *Reader) fill(n, most int) error {
	if r.rd == nil {
		return io.EOF
	}
	if len(r.buf)-r.r < n || r.w == len(r.buf) {
		need := r.r - r.mark + n
		switch {
		case !r.borrowed && r.mark > 0 && len(r.buf) >= need:
			r.w = copy(r.buf, r.buf[r.mark:r.w])
		default:
			size := max(initialBufSize, len(r.buf))
			if size < need {
				size = max(2*len(r.buf), need+initialBufSize/2)
				if most > 0 {
					size = max(need, min(size, r.r-r.mark+most))
				}
			}
			var nb []byte
			if len(r.spare) >= size && r.spareSeq < r.seq {
				nb = r.spare
			} else {
				nb = make([]byte, size)
			}
			r.w = copy(nb, r.buf[r.mark:r.w])
			switch {
			case len(r.buf) > retainBufSize:
				r.spare = nil
			case r.buf != nil:
				r.spare, r.spareSeq = r.buf, r.seq
			}
			r.buf = nb
		}
		r.r -= r.mark
		r.mark = 0
	}
	for i := 0; i < maxEmptyReads; i++ {
		free := len(r.buf) - r.w
		m, err := r.rd.Read(r.buf[r.w:])
		if m < 0 || m > free {
			return io.ErrNoProgress
		}
		if m == free && free >= len(r.buf)/2 {
			r.fullReads++
		} else if m > 0 {
			r.fullReads = 0
		}
		r.w += m
		if m > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// readLine returns the next line without its CRLF, borrowed.
func (r *Reader) readLine() ([]byte, error) {
	scanned := 0
	for {
		if i := bytes.IndexByte(r.buf[r.r+scanned:r.w], '\n'); i >= 0 {
			end := r.r + scanned + i
			if end == r.r || r.buf[end-1] != '\r' {
				return nil, protocolError("line not terminated by CRLF")
			}
			line := r.buf[r.r : end-1]
			if len(line) > MaxLine {
				return nil, ErrLineTooLong
			}
			if bytes.IndexByte(line, '\r') >= 0 {
				return nil, protocolError("CR inside a line")
			}
			r.r = end + 1
			return line, nil
		}
		scanned = r.w - r.r
		if scanned > MaxLine+1 { // a full line and its CR may be waiting for LF
			return nil, ErrLineTooLong
		}
		if err := r.fill(scanned+1, 0); err != nil {
			return nil, err
		}
	}
}

func (r *Reader) maxBulk() int64 {
	if r.MaxBulk > 0 {
		return r.MaxBulk
	}
	return DefaultMaxBulk
}

func (r *Reader) maxDepth() int {
	if r.MaxDepth > 0 {
		return r.MaxDepth
	}
	return DefaultMaxDepth
}

func (r *Reader) readValue(depth int) (Value, error) {
	line, err := r.readLine()
	if err != nil {
		return Value{}, err
	}
	if len(line) == 0 {
		return Value{}, protocolError("empty line where a type byte was expected")
	}
	t, rest := Type(line[0]), line[1:]
	switch t {
	case SimpleString, SimpleError:
		r.borrowed = true
		return Value{Type: t, Str: rest}, nil
	case BigNumber:
		if !isDecimal(rest) {
			return Value{}, protocolError("invalid big number")
		}
		r.borrowed = true
		return Value{Type: t, Str: rest}, nil
	case Integer:
		if len(rest) > 1 && rest[0] == '+' && rest[1] >= '0' && rest[1] <= '9' {
			rest = rest[1:] // the spec allows an explicit plus sign
		}
		n, ok := parseInt(rest)
		if !ok {
			return Value{}, protocolError("invalid integer")
		}
		return Value{Type: t, Int: n}, nil
	case Null:
		if len(rest) != 0 {
			return Value{}, protocolError("invalid null")
		}
		return Value{Type: Null}, nil
	case Boolean:
		if len(rest) == 1 && rest[0] == 't' {
			return Value{Type: t, Int: 1}, nil
		}
		if len(rest) == 1 && rest[0] == 'f' {
			return Value{Type: t}, nil
		}
		return Value{}, protocolError("invalid boolean")
	case Double:
		f, ok := parseDouble(rest)
		if !ok {
			return Value{}, protocolError("invalid double")
		}
		r.borrowed = true
		return Value{Type: t, Float: f, Str: rest}, nil
	case BulkString, BulkError, Verbatim:
		return r.readBulk(t, rest)
	case Array, Set, Push, Map, Attribute:
		return r.readAggregate(t, rest, depth)
	}
	return Value{}, protocolError("unknown type byte " + strconv.QuoteRune(rune(t)))
}

func (r *Reader) readBulk(t Type, rest []byte) (Value, error) {
	n, ok := parseInt(rest)
	if !ok {
		if len(rest) == 1 && rest[0] == '?' {
			return Value{}, protocolError("streamed strings (length '?') are not supported")
		}
		return Value{}, protocolError("invalid bulk length")
	}
	if n == -1 && t == BulkString {
		return Value{Type: Null}, nil
	}
	if n < 0 {
		return Value{}, protocolError("negative bulk length")
	}
	if n > r.maxBulk() || n > math.MaxInt-2 {
		return Value{}, limitError(ErrBulkTooLarge, strconv.FormatInt(n, 10)+" bytes")
	}
	size := int(n)
	if err := r.ensureBulk(size + 2); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Value{}, err
	}
	data := r.buf[r.r : r.r+size : r.r+size]
	if r.buf[r.r+size] != '\r' || r.buf[r.r+size+1] != '\n' {
		return Value{}, protocolError("bulk payload not terminated by CRLF")
	}
	r.r += size + 2
	r.borrowed = true
	if t == Verbatim && (size < 4 || data[3] != ':') {
		return Value{}, protocolError("verbatim string without a format prefix")
	}
	return Value{Type: t, Str: data}, nil
}

func (r *Reader) readAggregate(t Type, rest []byte, depth int) (Value, error) {
	n, ok := parseInt(rest)
	if !ok {
		if len(rest) == 1 && rest[0] == '?' {
			return Value{}, protocolError("streamed aggregates (length '?') are not supported")
		}
		return Value{}, protocolError("invalid aggregate length")
	}
	if n == -1 && (t == Array || t == Set || t == Map) {
		return Value{Type: Null}, nil
	}
	if n < 0 || n > maxAggregateLen {
		return Value{}, protocolError("invalid aggregate length")
	}
	if depth+1 > r.maxDepth() {
		return Value{}, ErrTooDeep
	}
	count := n
	if t == Map || t == Attribute {
		count *= 2
	}
	// Announced lengths are not trusted: slots are reserved up front only
	// for short aggregates while few are reserved (deeply nested short
	// aggregates could otherwise reserve slots for elements never sent),
	// or when the bytes already buffered for this value could hold every
	// element reserved so far. Otherwise the elements are appended as
	// they arrive.
	var elems []Value
	if reserve := r.reserved + count; count == 0 || count <= eagerAggregate && reserve <= eagerSlots || reserve <= int64(r.w-r.mark)/minValueLen {
		r.reserved += count
		elems = r.alloc(int(count))
		for i := range elems {
			e, err := r.readElem(depth + 1)
			if err != nil {
				return Value{}, err
			}
			elems[i] = e
		}
	} else {
		for i := int64(0); i < count; i++ {
			e, err := r.readElem(depth + 1)
			if err != nil {
				return Value{}, err
			}
			elems = append(elems, e)
		}
	}
	v := Value{Type: t, Elems: elems}
	if t != Attribute {
		return v, nil
	}
	// An attribute describes the value that follows it. A value holds one
	// attribute map, and a chain of attributes would recurse without
	// bound, so an attribute may not follow an attribute.
	if err := r.ensure(1); err != nil {
		return Value{}, err
	}
	if r.buf[r.r] == byte(Attribute) {
		return Value{}, protocolError("attribute followed by another attribute")
	}
	next, err := r.readValue(depth)
	if err != nil {
		return Value{}, err
	}
	slot := r.alloc(1)
	slot[0] = v
	next.Attrs = &slot[0]
	return next, nil
}

func (r *Reader) readElem(depth int) (Value, error) {
	v, err := r.readValue(depth)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return v, err
}

// alloc reserves n element slots. A full arena is replaced, never moved:
// earlier slices keep pointing at the old one.
func (r *Reader) alloc(n int) []Value {
	if n == 0 {
		return []Value{}
	}
	if r.used+n > len(r.arena) {
		r.arena = make([]Value, max(2*len(r.arena), n, 64))
		r.used = 0
	}
	s := r.arena[r.used : r.used+n : r.used+n]
	r.used += n
	return s
}

// parseInt parses a decimal int64 with an optional '-', rejecting overflow.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		// Check before multiplying: n*10 can wrap around uint64.
		if n > (math.MaxInt64+1)/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
		if n > math.MaxInt64+1 {
			return 0, false
		}
	}
	if neg {
		return -int64(n), true // -(MaxInt64+1) wraps to MinInt64 exactly
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

func isDecimal(b []byte) bool {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parseDouble(b []byte) (float64, bool) {
	switch string(b) {
	case "inf", "+inf":
		return math.Inf(1), true
	case "-inf":
		return math.Inf(-1), true
	case "nan", "-nan":
		return math.NaN(), true
	}
	if len(b) == 0 || len(b) > 400 {
		return 0, false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, false
	}
	return f, true
}
