package kafka

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/sluicehq/sluice/domain/state"
)

// offsets maps a partition to the next offset to read in it.
type offsets map[int32]int64

// encode is the bookmark value: a JSON object from partition number to next offset, kept
// as text because a bookmark holds a scalar.
func (o offsets) encode() string {
	keys := make([]int32, 0, len(o))
	for p := range o {
		keys = append(keys, p)
	}
	slices.Sort(keys)
	b := []byte{'{'}
	for i, p := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(p), 10)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, o[p], 10)
	}
	return string(append(b, '}'))
}

// offsetsOf reads a bookmark written by encode; nil means none (a first run).
func offsetsOf(b *state.Bookmark) (offsets, error) {
	if b == nil || b.Value == nil {
		return nil, nil
	}
	s, ok := b.Value.(string)
	if !ok {
		return nil, fmt.Errorf("bookmark %v is not a kafka offsets bookmark; set state.key to start a new one", b.Value)
	}
	var raw map[string]int64
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("bookmark is not a kafka offsets bookmark (%w); set state.key to start a new one", err)
	}
	out := make(offsets, len(raw))
	for k, v := range raw {
		p, err := strconv.ParseInt(k, 10, 32)
		if err != nil || p < 0 || v < 0 {
			return nil, fmt.Errorf("bookmark holds partition %q at offset %d; set state.key to start a new one", k, v)
		}
		out[int32(p)] = v
	}
	return out, nil
}
