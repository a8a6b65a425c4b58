package runs

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// IDLead bounds how far a run id's time may run ahead of its created_at: a run made by
// this service has created_at ≤ id time ≤ created_at + IDLead (both in milliseconds).
// The id takes the time of created_at itself (the service's clock, not a second reading);
// it runs ahead only when ids made in one millisecond, or after the clock stepped back,
// continue from the last id. A time window over created_at is therefore also a window
// over ids, which the history walks by primary key (SPEC §14.9).
const IDLead = time.Minute

// next returns a new UUIDv7 stamped with the current time (ids of other records).
func (v *v7Source) next() (string, error) { return v.nextAt(time.Now()) }

// nextAt returns a new UUIDv7: 48 bits of Unix milliseconds of at, then random bits.
// When at has not moved past the last id (same millisecond, or a step back), the last id
// plus one is used instead, keeping ids increasing — unless that id's time is more than
// IDLead ahead of at (the clock stepped back further): then the id takes at's time, so
// the IDLead bound holds and only this process's order bends across the step.
func (v *v7Source) nextAt(at time.Time) (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", err
	}
	ms := uint64(max(at.UnixMilli(), 0))
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	stamp(&u)

	v.mu.Lock()
	if bytes.Compare(u[:], v.last[:]) <= 0 {
		next := v.last
		increment(&next)
		if idMillis(next) <= ms+uint64(IDLead.Milliseconds()) {
			u = next
		}
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

// idMillis is the Unix millisecond timestamp of a UUIDv7.
func idMillis(u [16]byte) uint64 {
	return uint64(u[0])<<40 | uint64(u[1])<<32 | uint64(u[2])<<24 | uint64(u[3])<<16 | uint64(u[4])<<8 | uint64(u[5])
}
