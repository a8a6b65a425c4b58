package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Bookmark is the resume point of an incremental read: every row whose cursor column is
// greater than Value has not been confirmed yet. Value is a JSON-compatible scalar
// (string, int64, float64, bool) or a time in RFC 3339 text.
type Bookmark struct {
	Cursor string `json:"cursor"`
	Value  any    `json:"value"`
}

// Formats a bookmark can be written in.
const (
	FormatBare     = 1 // just the cursor value as JSON
	FormatEnvelope = 2 // {"v":2,"cursor":…,"value":…}
	FormatMax      = FormatEnvelope
)

// ErrFormat is returned for bytes that are no bookmark of a known format.
var ErrFormat = errors.New("unknown state format")

type envelope struct {
	V      int    `json:"v"`
	Cursor string `json:"cursor"`
	Value  any    `json:"value"`
}

// Encode writes b in the given format.
func Encode(b Bookmark, format int) ([]byte, error) {
	switch format {
	case FormatBare:
		return json.Marshal(b.Value)
	case FormatEnvelope:
		return json.Marshal(envelope{V: FormatEnvelope, Cursor: b.Cursor, Value: b.Value})
	}
	return nil, fmt.Errorf("%w: %d", ErrFormat, format)
}

// Decode reads a bookmark written in any known format. A bare bookmark has no cursor
// name; cursor is used for it.
func Decode(data []byte, cursor string) (Bookmark, error) {
	var env envelope
	if len(data) > 0 && data[0] == '{' {
		if err := json.Unmarshal(data, &env); err != nil || env.V != FormatEnvelope {
			return Bookmark{}, fmt.Errorf("%w: %q", ErrFormat, truncate(data))
		}
		return Bookmark{Cursor: env.Cursor, Value: normalize(env.Value)}, nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return Bookmark{}, fmt.Errorf("%w: %q", ErrFormat, truncate(data))
	}
	return Bookmark{Cursor: cursor, Value: normalize(v)}, nil
}

// normalize turns JSON numbers that are whole into int64 so they compare as integers.
func normalize(v any) any {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return int64(f)
	}
	return v
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// Key is the default state key of a pipeline: {tenant}/{name}. Untenanted pipelines use
// "_", which no tenant name can be, so the two never collide.
func Key(tenant, name string) string {
	if tenant == "" {
		tenant = "_"
	}
	return tenant + "/" + name
}

// ShardKey is the state key of one shard of a run.
func ShardKey(runID string, shardIndex int) string {
	return runID + "::" + strconv.Itoa(shardIndex)
}
