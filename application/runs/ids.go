package runs

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// next returns a new UUIDv7: 48 bits of Unix milliseconds, then random bits. When the
// clock has not moved past the last id (same millisecond, or a step back), the last id
// plus one is used instead, keeping ids increasing.
func (v *v7Source) next() (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", err
	}
	ms := uint64(time.Now().UnixMilli())
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	stamp(&u)

	v.mu.Lock()
	if bytes.Compare(u[:], v.last[:]) <= 0 {
		u = v.last
		increment(&u)
	}
	v.last = u
	v.mu.Unlock()

	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:]), nil
}

// stamp sets the version (7) and variant (RFC 9562) bits.
func stamp(u *[16]byte) {
	u[6] = (u[6] & 0x0f) | 0x70
	u[8] = (u[8] & 0x3f) | 0x80
}

// increment adds one to the random part (the 62 bits after the variant, then the 12
// after the version), carrying into the timestamp in the (never seen) case it wraps.
func increment(u *[16]byte) {
	lo := binary.BigEndian.Uint64(u[8:]) & 0x3fffffffffffffff
	lo++
	if lo <= 0x3fffffffffffffff {
		binary.BigEndian.PutUint64(u[8:], lo|0x8000000000000000)
		return
	}
	binary.BigEndian.PutUint64(u[8:], 0x8000000000000000)
	hi := binary.BigEndian.Uint64(u[:8])
	// The 12 bits of rand_a sit below the version nibble; bump them and the timestamp.
	ra := hi & 0x0fff
	ts := hi >> 16
	ra++
	if ra > 0x0fff {
		ra = 0
		ts++
	}
	binary.BigEndian.PutUint64(u[:8], ts<<16|0x7000|ra)
}

// NewIDSource returns a generator of increasing UUIDv7 ids, for the other records that
// page newest first by id (change requests).
func NewIDSource() func() (string, error) {
	v := &v7Source{}
	return v.next
}
