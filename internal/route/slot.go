package route

import (
	"strings"
	"unsafe"
)

// Slots is the number of hash slots in a Redis Cluster.
const Slots = 16384

// crc16Tables holds the lookup tables of CRC16/XMODEM (polynomial
// 0x1021, initial value 0, no reflection, no final XOR) for eight bytes at
// a time: crc16Tables[k][x] is the CRC of byte x followed by k zero bytes,
// so crc16Tables[0] is the usual byte-wise table. Keys of 8 bytes or more
// take one step per 8 bytes whose eight lookups do not wait on each other
// (BenchmarkSlot: a 17-byte key in about a third of the byte-wise time).
var crc16Tables = makeCRC16Tables()

func makeCRC16Tables() (t [8][256]uint16) {
	for i := range t[0] {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[0][i] = c
	}
	for k := 1; k < len(t); k++ {
		for i := range t[k] {
			c := t[k-1][i]
			t[k][i] = c<<8 ^ t[0][c>>8]
		}
	}
	return t
}

// crc16 returns the CRC16/XMODEM of key. The register's two bytes fold
// into the first two bytes of each 8-byte block.
func crc16(key string) uint16 {
	var crc uint16
	t := &crc16Tables
	for len(key) >= 8 {
		crc = t[7][byte(crc>>8)^key[0]] ^ t[6][byte(crc)^key[1]] ^
			t[5][key[2]] ^ t[4][key[3]] ^ t[3][key[4]] ^ t[2][key[5]] ^
			t[1][key[6]] ^ t[0][key[7]]
		key = key[8:]
	}
	for i := 0; i < len(key); i++ {
		crc = crc<<8 ^ t[0][byte(crc>>8)^key[i]]
	}
	return crc
}

// Slot returns the hash slot of key: CRC16 (XMODEM/CCITT, poly 0x1021,
// init 0) mod 16384 of the key, or of the hash tag: the bytes between the
// first '{' and the first '}' after it, when that is non-empty.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key)) & (Slots - 1)
}

// SlotBytes is [Slot] for a key held in a byte slice; it does not allocate.
func SlotBytes(key []byte) int {
	// Slot neither keeps nor modifies its argument, so viewing key as a
	// string without a copy is safe.
	return Slot(unsafe.String(unsafe.SliceData(key), len(key)))
}
