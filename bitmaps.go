package respire

import (
	"strconv"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

var (
	specBITCOUNT   = specOf(catalog.Bitmap.BITCOUNT())
	specBITPOS     = specOf(catalog.Bitmap.BITPOS())
	specGETBIT     = specOf(catalog.Bitmap.GETBIT())
	specSETBIT     = specOf(catalog.Bitmap.SETBIT())
	specBITOP      = specOf(catalog.Bitmap.BITOP())
	specBITFIELD   = specOf(catalog.Bitmap.BITFIELD())
	specBITFIELDRO = specOf(catalog.Bitmap.BITFIELD_RO())
)

// maxBitOffset is the largest bit offset Redis accepts (a string of 512
// MiB).
const maxBitOffset = 1<<32 - 1

// BitUnit says how the ends of a [BitRange] count. Its values are plain
// constants, safe for concurrent use.
type BitUnit uint8

// Units of a bit range.
const (
	// BitUnitByte counts in bytes (the default; sent as nothing, so it
	// works on every server).
	BitUnitByte BitUnit = iota
	// BitUnitBit counts in bits (BIT; Redis 7.0 or later).
	BitUnitBit
)

// BitRange is a range of a string, both ends included; negative ends
// count from the end of the string (-1 is the last byte or bit). A call only
// reads it and keeps no reference to it, so one value may serve concurrent
// calls while nobody changes it.
type BitRange struct {
	Start, End int64
	// Unit says whether Start and End count bytes or bits. Defaults to
	// BitUnitByte.
	Unit BitUnit
}

// argUnit appends u's word (nothing for bytes, the server's default).
func argUnit(f *wire.Frame, u BitUnit) {
	if u == BitUnitBit {
		arg(f, "BIT")
	}
}

// BitCount returns how many bits are set in the string at key (BITCOUNT),
// within rng when it is not nil; 0 when key does not exist. An undefined
// rng.Unit fails with [ErrInvalidArgument]. Its retry category is
// ReadOnly.
func (c *Client) cmdBitCount(key string, rng *BitRange) cmd[int64] {
	if rng == nil {
		f := c.newFrame(2, "BITCOUNT")
		arg(f, key)
		return typedCmd(f, specBITCOUNT, wire.WantInt, intOf)
	}
	if rng.Unit > BitUnitBit {
		return invalidCmd[int64](specBITCOUNT, "undefined Unit")
	}
	n := 4
	if rng.Unit == BitUnitBit {
		n++
	}
	f := c.newFrame(n, "BITCOUNT")
	arg(f, key)
	argInt(f, rng.Start)
	argInt(f, rng.End)
	argUnit(f, rng.Unit)
	return typedCmd(f, specBITCOUNT, wire.WantInt, intOf)
}

// BitPosOptions limit where [Client.BitPos] searches. The zero value
// searches the whole string. A call only reads it and keeps no reference to
// it, so one value may serve concurrent calls while nobody changes it.
type BitPosOptions struct {
	// Start is where the search begins; negative counts from the end.
	// Defaults to 0.
	Start int64
	// End, when HasEnd is set, is where it stops (included). Without an
	// end, a search for a clear bit in a string whose bits are all set
	// reports the first bit past the string; with one, it reports -1.
	End    int64
	HasEnd bool
	// Unit says whether Start and End count bytes or bits; BitUnitBit
	// needs HasEnd. Defaults to BitUnitByte.
	Unit BitUnit
}

// BitPos returns the position, in bits from the start of the string, of
// the first bit set to bit (true: 1) in the string at key (BITPOS),
// searching where opt says, or -1 when there is none (see
// [BitPosOptions] for a search for a clear bit). An undefined Unit, or
// BitUnitBit without HasEnd, fails with [ErrInvalidArgument]. Its retry
// category is ReadOnly.
func (c *Client) cmdBitPos(key string, bit bool, opt BitPosOptions) cmd[int64] {
	switch {
	case opt.Unit > BitUnitBit:
		return invalidCmd[int64](specBITPOS, "undefined Unit")
	case opt.Unit == BitUnitBit && !opt.HasEnd:
		return invalidCmd[int64](specBITPOS, "Unit needs HasEnd")
	}
	n := 3
	switch {
	case opt.HasEnd:
		n += 2
		if opt.Unit == BitUnitBit {
			n++
		}
	case opt.Start != 0:
		n++
	}
	f := c.newFrame(n, "BITPOS")
	arg(f, key)
	arg(f, bitWord(bit))
	if opt.HasEnd || opt.Start != 0 {
		argInt(f, opt.Start)
	}
	if opt.HasEnd {
		argInt(f, opt.End)
		argUnit(f, opt.Unit)
	}
	return typedCmd(f, specBITPOS, wire.WantInt, intOf)
}

func bitWord(bit bool) string {
	if bit {
		return "1"
	}
	return "0"
}

// GetBit returns the bit at offset in the string at key (GETBIT; true:
// 1); false when key does not exist or the string is shorter. An offset
// outside 0 to 2^32-1 fails with [ErrInvalidArgument]. Its retry category
// is ReadOnly.
func (c *Client) cmdGetBit(key string, offset int64) cmd[bool] {
	if offset < 0 || offset > maxBitOffset {
		return invalidCmd[bool](specGETBIT, "offset out of range 0 to 2^32-1")
	}
	f := c.newFrame(3, "GETBIT")
	arg(f, key)
	argInt(f, offset)
	return typedCmd(f, specGETBIT, wire.WantInt, flagOf)
}

// SetBit sets the bit at offset in the string at key to value (SETBIT;
// true: 1), growing the string as needed, and returns the bit it held. An
// offset outside 0 to 2^32-1 fails with [ErrInvalidArgument]. Its retry
// category is WriteLastWins: a resend writes the same bit, and reports the
// bit the first attempt wrote.
func (c *Client) cmdSetBit(key string, offset int64, value bool) cmd[bool] {
	if offset < 0 || offset > maxBitOffset {
		return invalidCmd[bool](specSETBIT, "offset out of range 0 to 2^32-1")
	}
	f := c.newFrame(4, "SETBIT")
	arg(f, key)
	argInt(f, offset)
	arg(f, bitWord(value))
	return typedCmd(f, specSETBIT, wire.WantInt, flagOf)
}

// BitOperation is the operation of [Client.BitOp]. Its values are plain
// constants, safe for concurrent use.
type BitOperation uint8

// Bitwise operations.
const (
	// BitAnd is the bitwise AND of the sources (AND).
	BitAnd BitOperation = iota
	// BitOr is their bitwise OR (OR).
	BitOr
	// BitXor is their bitwise XOR (XOR).
	BitXor
	// BitNot is the inverse of exactly one source (NOT).
	BitNot
)

// BitOp stores at dest the bitwise op of the strings at keys (BITOP),
// replacing dest, and returns dest's length in bytes (the longest
// source's; a missing source counts as zero bytes). No keys, more than
// one key for BitNot, or an undefined op fails with [ErrInvalidArgument].
// On a Cluster client dest and keys must share a slot. Its retry category
// is WriteAccumulating, the catalog's.
func (c *Client) cmdBitOp(op BitOperation, dest string, keys ...string) cmd[int64] {
	var word string
	switch op {
	case BitAnd:
		word = "AND"
	case BitOr:
		word = "OR"
	case BitXor:
		word = "XOR"
	case BitNot:
		word = "NOT"
	default:
		return invalidCmd[int64](specBITOP, "undefined op")
	}
	switch {
	case len(keys) == 0:
		return invalidCmd[int64](specBITOP, "no keys")
	case op == BitNot && len(keys) != 1:
		return invalidCmd[int64](specBITOP, "NOT takes exactly one key")
	}
	f := c.newFrame(3+len(keys), "BITOP")
	arg(f, word)
	arg(f, dest)
	for _, k := range keys {
		arg(f, k)
	}
	return typedCmd(f, specBITOP, wire.WantInt, intOf)
}

// BitField is one integer field of a string for BITFIELD: its type and
// where it starts. A call only reads it and keeps no reference to it, so one
// value may serve concurrent calls while nobody changes it.
type BitField struct {
	// Signed makes the field a signed integer (iN) rather than an
	// unsigned one (uN).
	Signed bool
	// Bits is the field's width: 1 to 64 when Signed, else 1 to 63.
	Bits int
	// Offset is the bit where the field starts, or, when Scaled, its
	// index in an array of fields of this width ("#N": the bit offset is
	// Offset*Bits). Must not be negative.
	Offset int64
	Scaled bool
}

// valid reports what is wrong with x, or "".
func (x BitField) valid() string {
	max := 63
	if x.Signed {
		max = 64
	}
	switch {
	case x.Bits < 1 || x.Bits > max:
		return "field width out of range (i1 to i64, u1 to u63)"
	case x.Offset < 0:
		return "negative field offset"
	}
	return ""
}

// args appends the field's type and offset.
func (x BitField) args(f *wire.Frame) {
	t := "u"
	if x.Signed {
		t = "i"
	}
	arg(f, t+strconv.Itoa(x.Bits))
	if x.Scaled {
		arg(f, "#"+strconv.FormatInt(x.Offset, 10))
		return
	}
	argInt(f, x.Offset)
}

// BitFieldOverflow is how BITFIELD's SET and INCRBY treat a value that
// does not fit their field. Its values are plain constants, safe for
// concurrent use.
type BitFieldOverflow uint8

// Overflow behaviours.
const (
	// OverflowWrap wraps around (WRAP, the default).
	OverflowWrap BitFieldOverflow = iota
	// OverflowSat saturates at the field's minimum or maximum (SAT).
	OverflowSat
	// OverflowFail leaves the field unchanged and reports nil (FAIL).
	OverflowFail
)

type bitFieldKind uint8

const (
	bfGet bitFieldKind = iota
	bfSet
	bfIncrBy
	bfOverflow
)

// BitFieldOp is one operation of [Client.BitField]; make it with
// [BitFieldGet], [BitFieldSet], [BitFieldIncrBy] or
// [BitFieldOverflowMode]. A call only reads it and keeps no reference to it,
// so one value may serve concurrent calls while nobody changes it.
type BitFieldOp struct {
	kind     bitFieldKind
	field    BitField
	value    int64
	overflow BitFieldOverflow
}

// BitFieldGet reads field (GET); its result is the field's value.
func BitFieldGet(field BitField) BitFieldOp { return BitFieldOp{kind: bfGet, field: field} }

// BitFieldSet writes value to field (SET); its result is the field's
// previous value.
func BitFieldSet(field BitField, value int64) BitFieldOp {
	return BitFieldOp{kind: bfSet, field: field, value: value}
}

// BitFieldIncrBy adds delta to field (INCRBY); its result is the new
// value.
func BitFieldIncrBy(field BitField, delta int64) BitFieldOp {
	return BitFieldOp{kind: bfIncrBy, field: field, value: delta}
}

// BitFieldOverflowMode sets how the SET and INCRBY operations after it
// overflow (OVERFLOW); it has no result.
func BitFieldOverflowMode(mode BitFieldOverflow) BitFieldOp {
	return BitFieldOp{kind: bfOverflow, overflow: mode}
}

// BitField runs ops on the string at key in order (BITFIELD) and returns
// one result per GET, SET and INCRBY, in order: nil for a SET or INCRBY
// that overflowed under [OverflowFail]. No ops, an invalid field or an
// undefined overflow mode fails with [ErrInvalidArgument] before anything
// is sent. Its retry category is WriteAccumulating, the catalog's, even
// for GETs only: use [Client.BitFieldRO] to read.
func (c *Client) cmdBitField(key string, ops ...BitFieldOp) cmd[[]*int64] {
	if len(ops) == 0 {
		return invalidCmd[[]*int64](specBITFIELD, "no ops")
	}
	n, results := 2, 0
	for _, op := range ops {
		switch op.kind {
		case bfOverflow:
			if op.overflow > OverflowFail {
				return invalidCmd[[]*int64](specBITFIELD, "undefined overflow mode")
			}
			n += 2
			continue
		case bfGet:
			n += 3
		default:
			n += 4
		}
		if why := op.field.valid(); why != "" {
			return invalidCmd[[]*int64](specBITFIELD, why)
		}
		results++
	}
	f := c.newFrame(n, "BITFIELD")
	arg(f, key)
	for _, op := range ops {
		switch op.kind {
		case bfOverflow:
			arg(f, "OVERFLOW")
			arg(f, [...]string{"WRAP", "SAT", "FAIL"}[op.overflow])
			continue
		case bfGet:
			arg(f, "GET")
		case bfSet:
			arg(f, "SET")
		case bfIncrBy:
			arg(f, "INCRBY")
		}
		op.field.args(f)
		if op.kind != bfGet {
			argInt(f, op.value)
		}
	}
	return typedCmd(f, specBITFIELD, wire.WantValue, countedOf(results, "array of one result per GET, SET and INCRBY", bitFieldOf))
}

// bitFieldOf converts BITFIELD's array of integers and nulls.
func bitFieldOf(v resp.Value) ([]*int64, error) {
	if err := convList(v, "array of integers"); err != nil {
		return nil, err
	}
	vals := make([]int64, len(v.Elems))
	out := make([]*int64, len(v.Elems))
	for i, e := range v.Elems {
		if e.IsNull() {
			continue
		}
		n, err := convInt64(e)
		if err != nil {
			return nil, atElement(i, err)
		}
		vals[i] = n
		out[i] = &vals[i]
	}
	return out, nil
}

// BitFieldRO reads fields of the string at key (BITFIELD_RO; Redis 6.0 or
// later) and returns their values in order; a missing key reads as zeros.
// No fields or an invalid field fails with [ErrInvalidArgument] before
// anything is sent. Its retry category is ReadOnly.
func (c *Client) cmdBitFieldRO(key string, fields ...BitField) cmd[[]int64] {
	if len(fields) == 0 {
		return invalidCmd[[]int64](specBITFIELDRO, "no fields")
	}
	for _, x := range fields {
		if why := x.valid(); why != "" {
			return invalidCmd[[]int64](specBITFIELDRO, why)
		}
	}
	f := c.newFrame(2+3*len(fields), "BITFIELD_RO")
	arg(f, key)
	for _, x := range fields {
		arg(f, "GET")
		x.args(f)
	}
	return typedCmd(f, specBITFIELDRO, wire.WantValue, countedOf(len(fields), "array of one value per field", int64sOf))
}
