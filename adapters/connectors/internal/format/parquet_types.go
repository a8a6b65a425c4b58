package format

import (
	"math/big"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	pqformat "github.com/parquet-go/parquet-go/format"
)

// convert turns one non-null leaf value into the Go value a page carries (SPEC §14.4).
type convert func(v parquet.Value) any

// converterOf picks the conversion of a leaf column from its logical type, then its
// deprecated converted type, then its physical type.
func converterOf(t parquet.Type) convert {
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		switch l := lt.Value.(type) {
		case *pqformat.TimestampType:
			return timestampOf(l.Unit.Value.Duration())
		case *pqformat.DateType:
			return func(v parquet.Value) any { return time.Unix(int64(v.Int32())*86400, 0).UTC() }
		case *pqformat.DecimalType:
			return decimalOf(t.Kind(), int(l.Scale))
		case *pqformat.StringType, *pqformat.EnumType, *pqformat.JsonType:
			return func(v parquet.Value) any { return string(v.ByteArray()) }
		case *pqformat.UUIDType:
			return func(v parquet.Value) any { return uuidText(v.ByteArray()) }
		case *pqformat.IntType:
			if !l.IsSigned && l.BitWidth == 64 {
				return func(v parquet.Value) any {
					u := uint64(v.Int64())
					if u > 1<<63-1 {
						return strconv.FormatUint(u, 10)
					}
					return int64(u)
				}
			}
			if !l.IsSigned && l.BitWidth == 32 {
				return func(v parquet.Value) any { return int64(uint32(v.Int32())) }
			}
		case *pqformat.TimeType:
			unit := l.Unit.Value.Duration()
			return func(v parquet.Value) any {
				n := v.Int64()
				if t.Kind() == parquet.Int32 {
					n = int64(v.Int32())
				}
				return time.Unix(0, 0).UTC().Add(time.Duration(n) * unit).Format("15:04:05.999999999")
			}
		}
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.UTF8, deprecated.Enum, deprecated.Json:
			return func(v parquet.Value) any { return string(v.ByteArray()) }
		case deprecated.Date:
			return func(v parquet.Value) any { return time.Unix(int64(v.Int32())*86400, 0).UTC() }
		case deprecated.TimestampMillis:
			return timestampOf(time.Millisecond)
		case deprecated.TimestampMicros:
			return timestampOf(time.Microsecond)
		}
	}
	switch t.Kind() {
	case parquet.Boolean:
		return func(v parquet.Value) any { return v.Boolean() }
	case parquet.Int32:
		return func(v parquet.Value) any { return int64(v.Int32()) }
	case parquet.Int64:
		return func(v parquet.Value) any { return v.Int64() }
	case parquet.Int96:
		// The legacy timestamp: nanoseconds of the day, then the Julian day.
		return func(v parquet.Value) any {
			b := v.Int96()
			nanos := int64(b[1])<<32 | int64(b[0])
			day := int64(b[2])
			return time.Unix((day-2440588)*86400, nanos).UTC()
		}
	case parquet.Float:
		return func(v parquet.Value) any { return float64(v.Float()) }
	case parquet.Double:
		return func(v parquet.Value) any { return v.Double() }
	}
	return func(v parquet.Value) any { return append([]byte{}, v.ByteArray()...) }
}

func timestampOf(unit time.Duration) convert {
	return func(v parquet.Value) any {
		n := v.Int64()
		switch unit {
		case time.Millisecond:
			return time.UnixMilli(n).UTC()
		case time.Microsecond:
			return time.UnixMicro(n).UTC()
		}
		return time.Unix(0, n).UTC()
	}
}

// decimalOf renders a decimal's unscaled integer with its scale as exact text, so no
// digit is lost to a float.
func decimalOf(kind parquet.Kind, scale int) convert {
	return func(v parquet.Value) any {
		var n big.Int
		switch kind {
		case parquet.Int32:
			n.SetInt64(int64(v.Int32()))
		case parquet.Int64:
			n.SetInt64(v.Int64())
		default:
			b := v.ByteArray() // big-endian two's complement
			n.SetBytes(b)
			if len(b) > 0 && b[0]&0x80 != 0 {
				n.Sub(&n, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
			}
		}
		return decimalText(n.String(), scale)
	}
}

func decimalText(digits string, scale int) string {
	if scale <= 0 {
		return digits
	}
	neg := digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	for len(digits) <= scale {
		digits = "0" + digits
	}
	out := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	if neg {
		return "-" + out
	}
	return out
}

func uuidText(b []byte) string {
	u, err := uuid.FromBytes(b)
	if err != nil {
		return string(b)
	}
	return u.String()
}
