package postgres

import (
	"bytes"
	"database/sql/driver"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
)

// decoder turns one raw column value (never NULL) into a page value.
type decoder func(raw []byte) (any, error)

// pgEpoch is where PostgreSQL's binary dates and timestamps count from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// columnCodec picks how a result column travels and is decoded: the common types in
// binary, decoded here without the driver's reflection; numeric as text, so no digit is
// lost; any other type pgx knows in binary through its codec; the rest as text.
func columnCodec(m *pgtype.Map, oid uint32) (int16, decoder) {
	switch oid {
	case pgtype.BoolOID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) { return len(b) == 1 && b[0] == 1, need(b, 1) }
	case pgtype.Int2OID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) {
			if err := need(b, 2); err != nil {
				return nil, err
			}
			return int64(int16(binary.BigEndian.Uint16(b))), nil
		}
	case pgtype.Int4OID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) {
			if err := need(b, 4); err != nil {
				return nil, err
			}
			return int64(int32(binary.BigEndian.Uint32(b))), nil
		}
	case pgtype.Int8OID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) {
			if err := need(b, 8); err != nil {
				return nil, err
			}
			return int64(binary.BigEndian.Uint64(b)), nil
		}
	case pgtype.OIDOID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) {
			if err := need(b, 4); err != nil {
				return nil, err
			}
			return int64(binary.BigEndian.Uint32(b)), nil
		}
	case pgtype.Float4OID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) {
			if err := need(b, 4); err != nil {
				return nil, err
			}
			return float64(math.Float32frombits(binary.BigEndian.Uint32(b))), nil
		}
	case pgtype.Float8OID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) {
			if err := need(b, 8); err != nil {
				return nil, err
			}
			return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
		}
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.UnknownOID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) { return string(b), nil }
	case pgtype.ByteaOID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) { return bytes.Clone(b), nil }
	case pgtype.TimestamptzOID, pgtype.TimestampOID:
		return pgtype.BinaryFormatCode, decodeTimestamp
	case pgtype.DateOID:
		return pgtype.BinaryFormatCode, decodeDate
	case pgtype.JSONOID:
		return pgtype.BinaryFormatCode, decodeJSON
	case pgtype.JSONBOID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) {
			if len(b) == 0 || b[0] != 1 {
				return nil, fmt.Errorf("unknown jsonb format")
			}
			return decodeJSON(b[1:])
		}
	case pgtype.UUIDOID:
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) {
			if err := need(b, 16); err != nil {
				return nil, err
			}
			return formatUUID(b), nil
		}
	case pgtype.NumericOID:
		return pgtype.TextFormatCode, func(b []byte) (any, error) { return string(b), nil }
	}
	if t, ok := m.TypeForOID(oid); ok && t.Codec.FormatSupported(pgtype.BinaryFormatCode) {
		return pgtype.BinaryFormatCode, func(b []byte) (any, error) {
			v, err := t.Codec.DecodeValue(m, oid, pgtype.BinaryFormatCode, b)
			if err != nil {
				return nil, err
			}
			return normalize(v), nil
		}
	}
	return pgtype.TextFormatCode, func(b []byte) (any, error) { return string(b), nil }
}

func need(b []byte, n int) error {
	if len(b) != n {
		return fmt.Errorf("expected %d bytes, got %d", n, len(b))
	}
	return nil
}

func decodeTimestamp(b []byte) (any, error) {
	if err := need(b, 8); err != nil {
		return nil, err
	}
	us := int64(binary.BigEndian.Uint64(b))
	switch us {
	case math.MaxInt64:
		return "infinity", nil
	case math.MinInt64:
		return "-infinity", nil
	}
	return pgEpoch.Add(time.Duration(us/1e6) * time.Second).Add(time.Duration(us%1e6) * time.Microsecond), nil
}

func decodeDate(b []byte) (any, error) {
	if err := need(b, 4); err != nil {
		return nil, err
	}
	days := int32(binary.BigEndian.Uint32(b))
	switch days {
	case math.MaxInt32:
		return "infinity", nil
	case math.MinInt32:
		return "-infinity", nil
	}
	return pgEpoch.AddDate(0, 0, int(days)), nil
}

// decodeJSON decodes a JSON document; whole numbers that fit become int64, so ids keep
// every digit.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return sqlspec.JSONNumbers(v), nil
}

func formatUUID(b []byte) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}

// normalize maps what pgx's codecs produce onto page value types (see execute.Page).
func normalize(v any) any {
	switch x := v.(type) {
	case nil, string, int64, float64, bool, []byte, map[string]any:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case uint32:
		return int64(x)
	case float32:
		return float64(x)
	case time.Time:
		return x.UTC()
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalize(x[i])
		}
		return out
	case [16]byte:
		return formatUUID(x[:])
	case netip.Prefix:
		return x.String()
	case netip.Addr:
		return x.String()
	case driver.Valuer:
		dv, err := x.Value()
		if err != nil {
			return fmt.Sprint(v)
		}
		if _, same := dv.(driver.Valuer); same {
			return fmt.Sprint(dv)
		}
		return normalize(dv)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}
