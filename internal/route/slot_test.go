package route_test

import (
	"math/rand/v2"
	"testing"

	"github.com/respire-go/respire/internal/route"
)

// refCRC16 is a bit-by-bit CRC16/XMODEM, the reference for the table
// driven implementation.
func refCRC16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func TestSlotVectors(t *testing.T) {
	tests := []struct {
		key  string
		want int
	}{
		{"foo", 12182},
		{"bar", 5061},
		{"123456789", 0x31C3},
		{"", 0},
		{"{user1000}.following", route.Slot("user1000")},
		{"{user1000}.followers", route.Slot("user1000")},
		{"foo{}{bar}", int(refCRC16([]byte("foo{}{bar}"))) % route.Slots},
		{"foo{{bar}}zap", route.Slot("{bar")},
		{"foo{bar}{zap}", route.Slot("bar")},
		{"{}", int(refCRC16([]byte("{}"))) % route.Slots},
		{"{", int(refCRC16([]byte("{"))) % route.Slots},
		{"foo{bar", int(refCRC16([]byte("foo{bar"))) % route.Slots},
		{"}foo{bar}", route.Slot("bar")},
		{"a}{b}", route.Slot("b")},
		{"{b}a}", route.Slot("b")},
	}
	for _, tt := range tests {
		if got := route.Slot(tt.key); got != tt.want {
			t.Errorf("Slot(%q) = %d, want %d", tt.key, got, tt.want)
		}
		if got := route.SlotBytes([]byte(tt.key)); got != tt.want {
			t.Errorf("SlotBytes(%q) = %d, want %d", tt.key, got, tt.want)
		}
	}
	if route.Slot("{user1000}.following") != route.Slot("{user1000}.followers") {
		t.Error("keys with the same hash tag hash to different slots")
	}
	if route.Slot("foo{}{bar}") == route.Slot("bar") {
		t.Error("foo{}{bar}: an empty tag must not select the next tag")
	}
}

func TestSlotMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		key := make([]byte, r.IntN(80))
		for i := range key {
			key[i] = "ab{}\x00\xff"[r.IntN(6)]
		}
		hashed := key
		if i := indexByte(key, '{'); i >= 0 {
			if j := indexByte(key[i+1:], '}'); j > 0 {
				hashed = key[i+1 : i+1+j]
			}
		}
		want := int(refCRC16(hashed)) % route.Slots
		if got := route.SlotBytes(key); got != want {
			t.Fatalf("SlotBytes(%q) = %d, want %d", key, got, want)
		}
		if got := route.Slot(string(key)); got != want {
			t.Fatalf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func TestSlotNoAlloc(t *testing.T) {
	key := "{user1000}.following"
	keyBytes := []byte(key)
	if n := testing.AllocsPerRun(100, func() { _ = route.Slot(key) }); n != 0 {
		t.Errorf("Slot allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = route.SlotBytes(keyBytes) }); n != 0 {
		t.Errorf("SlotBytes allocates %v times", n)
	}
}

var sinkSlot int

func BenchmarkSlot(b *testing.B) {
	b.Run("string", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkSlot = route.Slot("user:1000:profile")
		}
	})
	b.Run("tag", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkSlot = route.Slot("{user1000}.following")
		}
	})
	key := []byte("user:1000:profile")
	b.Run("bytes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkSlot = route.SlotBytes(key)
		}
	})
}
