package respire

import (
	"github.com/respire-go/respire/resp"
	"pgregory.net/rapid"
)

// Seeds for the hostile-reply harness: the replies Redis 7 sends (RESP3
// forms) to the methods whose converters walk nested structures. The
// harness mutates them (replaces a node with a generated value, drops or
// repeats an element, changes an aggregate's type), which reaches the
// converters' deeper paths that random values seldom do.

func sb(s string) resp.Value  { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
func si(n int64) resp.Value   { return resp.Value{Type: resp.Integer, Int: n} }
func sd(f float64) resp.Value { return resp.Value{Type: resp.Double, Float: f} }
func sa(e ...resp.Value) resp.Value {
	return resp.Value{Type: resp.Array, Elems: append([]resp.Value{}, e...)}
}
func sm(kv ...resp.Value) resp.Value {
	return resp.Value{Type: resp.Map, Elems: append([]resp.Value{}, kv...)}
}

var sNull = resp.Value{Type: resp.Null}

func seedEntry(id string) resp.Value { return sa(sb(id), sa(sb("f"), sb("v"))) }

func seedStreamInfo(full bool) resp.Value {
	kv := []resp.Value{
		sb("length"), si(2), sb("radix-tree-keys"), si(1), sb("radix-tree-nodes"), si(2),
		sb("last-generated-id"), sb("2-0"), sb("max-deleted-entry-id"), sb("0-0"),
		sb("entries-added"), si(2), sb("recorded-first-entry-id"), sb("1-0"),
	}
	if !full {
		return sm(append(kv, sb("groups"), si(1), sb("first-entry"), seedEntry("1-0"), sb("last-entry"), seedEntry("2-0"))...)
	}
	consumer := sm(sb("name"), sb("c"), sb("seen-time"), si(1000), sb("active-time"), si(1000),
		sb("pel-count"), si(1), sb("pending"), sa(sa(sb("1-0"), si(1000), si(1))))
	group := sm(sb("name"), sb("g"), sb("last-delivered-id"), sb("1-0"), sb("entries-read"), si(1),
		sb("lag"), si(1), sb("pel-count"), si(1), sb("pending"), sa(sa(sb("1-0"), sb("c"), si(1000), si(1))),
		sb("consumers"), sa(consumer))
	return sm(append(kv, sb("entries"), sa(seedEntry("1-0"), seedEntry("2-0")), sb("groups"), sa(group))...)
}

// hostileSeeds are the seed scripts of a method, by name.
var hostileSeeds = map[string][][]resp.Value{
	"XInfoStream":     {{seedStreamInfo(false)}},
	"XInfoStreamFull": {{seedStreamInfo(true)}},
	"XInfoGroups": {{sa(sm(sb("name"), sb("g"), sb("consumers"), si(1), sb("pending"), si(1),
		sb("last-delivered-id"), sb("1-0"), sb("entries-read"), si(1), sb("lag"), si(0)))}},
	"XInfoConsumers":     {{sa(sm(sb("name"), sb("c"), sb("pending"), si(1), sb("idle"), si(10), sb("inactive"), si(10)))}},
	"XPending":           {{sa(si(1), sb("1-0"), sb("1-0"), sa(sa(sb("c"), sb("1"))))}},
	"XPendingExt":        {{sa(sa(sb("1-0"), sb("c"), si(10), si(1)))}},
	"XAutoClaim":         {{sa(sb("0-0"), sa(seedEntry("1-0")), sa(sb("2-0")))}},
	"XAutoClaimJustID":   {{sa(sb("0-0"), sa(sb("1-0")), sa())}},
	"XClaim":             {{sa(seedEntry("1-0"), sNull)}},
	"XRange":             {{sa(seedEntry("1-0"), seedEntry("2-0"))}},
	"XRevRange":          {{sa(seedEntry("2-0"), seedEntry("1-0"))}},
	"XRead":              {{sm(sb("1"), sa(seedEntry("1-0"))), sa(sa(sb("1"), sa(seedEntry("1-0"))))}},
	"XReadGroup":         {{sm(sb("1"), sa(seedEntry("1-0"), sa(sb("2-0"), sNull)))}},
	"XAckDel":            {{sa(si(1), si(-1), si(2))}},
	"XDelEx":             {{sa(si(1), si(-1), si(2))}},
	"LCSIdx":             {{sm(sb("matches"), sa(sa(sa(si(0), si(1)), sa(si(0), si(1)), si(2))), sb("len"), si(2))}},
	"GeoPos":             {{sa(sa(sd(1), sd(2)), sNull)}},
	"GeoSearchLocations": {{sa(sa(sb("m"), sb("1.5"), si(123), sa(sb("1"), sb("2"))), sb("n"))}},
	"Info":               {{sb("# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n\r\n# Keyspace\r\ndb0:keys=1,expires=0\r\n")}},
	"Time":               {{sa(sb("1700000000"), sb("123456"))}},
	"ZMPop":              {{sa(sb("k"), sa(sa(sb("m"), sd(1))))}},
	"BZMPop":             {{sa(sb("k"), sa(sa(sb("m"), sd(1))))}},
	"LMPop":              {{sa(sb("k"), sa(sb("a"), sb("b")))}},
	"BLMPop":             {{sa(sb("k"), sa(sb("a"), sb("b")))}},
	"BZPopMin":           {{sa(sb("k"), sb("m"), sd(1))}},
	"BZPopMax":           {{sa(sb("k"), sb("m"), sd(1))}},
	"BLPop":              {{sa(sb("k"), sb("v"))}},
	"ZRangeWithScores":   {{sa(sa(sb("m"), sd(1)), sa(sb("n"), sd(2)))}},
	"ZRankWithScore":     {{sa(si(1), sd(1.5))}},
	"ZMScore":            {{sa(sd(1.5), sNull)}},
	"BitField":           {{sa(si(1), sNull)}},
	"HMGet":              {{sa(sb("v"), sNull)}},
	"MGet":               {{sa(sb("v"), sNull)}},
	"HGetAll":            {{sm(sb("f"), sb("v"))}},
	"HGetDel":            {{sa(sb("v"), sNull)}},
	"HExpire":            {{sa(si(1), si(-2))}},
	"HTTL":               {{sa(si(10), si(-1))}},
	"PubSubNumSub":       {{sm(sb("ch"), si(1))}},
	"ScanPages":          {{sa(sb("7"), sa(sb("a"), sb("b"))), sa(sb("0"), sa())}},
	"Scan":               {{sa(sb("7"), sa(sb("a"), sb("b"))), sa(sb("0"), sa())}},
	"HScan":              {{sa(sb("7"), sa(sb("f"), sb("v"))), sa(sb("0"), sa())}},
	"ZScan":              {{sa(sb("7"), sa(sb("m"), sb("1"))), sa(sb("0"), sa())}},
	"SScan":              {{sa(sb("0"), sa(sb("a")))}},
	"Script.Run":         {{{Type: resp.SimpleError, Str: []byte("NOSCRIPT No matching script")}, sb("sha"), si(1)}},
	"Function.Call":      {{{Type: resp.SimpleError, Str: []byte("ERR Function not found")}, sb("lib"), si(1)}},
	"Do":                 {{sm(sb("name"), sb("x"), sb("length"), si(1), sb("count"), sb("2"), sb("pending"), si(3), sb("score"), sd(1.5), sb("active"), resp.Value{Type: resp.Boolean, Int: 1}, sb("idle"), si(5), sb("value"), sb("v"), sb("id"), sNull, sb("time"), sb("2026-01-02T03:04:05Z"), sb("small"), si(1), sb("f32"), sb("1.5"))}},
}

// mutate returns v with one change drawn at a node of it: the node
// replaced by a generated value, or (for an aggregate) one element
// dropped or repeated, its type changed, or the change made inside one
// of its elements.
func mutate(t *rapid.T, v resp.Value) resp.Value {
	action := rapid.IntRange(0, 4).Draw(t, "mutation")
	if !v.Type.Aggregate() || len(v.Elems) == 0 {
		action = min(action, 1)
	}
	switch action {
	case 0: // keep this node; change inside, or nothing for a scalar
		if v.Type.Aggregate() && len(v.Elems) > 0 {
			i := rapid.IntRange(0, len(v.Elems)-1).Draw(t, "at")
			v.Elems = append([]resp.Value{}, v.Elems...)
			v.Elems[i] = mutate(t, v.Elems[i])
		}
		return v
	case 1:
		return genValue(t, rapid.IntRange(0, 2).Draw(t, "depth"), true)
	case 2:
		i := rapid.IntRange(0, len(v.Elems)-1).Draw(t, "drop")
		v.Elems = append(append([]resp.Value{}, v.Elems[:i]...), v.Elems[i+1:]...)
		return v
	case 3:
		i := rapid.IntRange(0, len(v.Elems)-1).Draw(t, "repeat")
		v.Elems = append(append([]resp.Value{}, v.Elems[:i+1]...), v.Elems[i:]...)
		return v
	}
	v.Type = rapid.SampledFrom([]resp.Type{resp.Array, resp.Map, resp.Set, resp.Push}).Draw(t, "aggregate")
	return v
}

// seedScript draws a mutation of one of name's seeds, or nil when it has
// none.
func seedScript(t *rapid.T, name string) []resp.Value {
	seeds := hostileSeeds[name]
	if len(seeds) == 0 {
		return nil
	}
	seed := seeds[rapid.IntRange(0, len(seeds)-1).Draw(t, "seed")]
	script := append([]resp.Value{}, seed...)
	for range rapid.IntRange(1, 3).Draw(t, "mutations") {
		i := rapid.IntRange(0, len(script)-1).Draw(t, "reply")
		script[i] = mutate(t, script[i])
	}
	return script
}
