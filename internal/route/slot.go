package route

import (
	"strings"
	"unsafe"
)

// Slots is the number of hash slots in a Redis Cluster.
const Slots = 16384

// crc16Table is the byte-wise lookup table of CRC16/XMODEM (polynomial
// 0x1021, initial value 0, no reflection, no final XOR).
var crc16Table = makeCRC16Table()

func makeCRC16Table() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
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
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^key[i]]
	}
	return int(crc) & (Slots - 1)
}

// SlotBytes is [Slot] for a key held in a byte slice; it does not allocate.
func SlotBytes(key []byte) int {
	// Slot neither keeps nor modifies its argument, so viewing key as a
	// string without a copy is safe.
	return Slot(unsafe.String(unsafe.SliceData(key), len(key)))
}
