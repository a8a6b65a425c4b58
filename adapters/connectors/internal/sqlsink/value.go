package sqlsink

import (
	"fmt"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
)

// Value converts the page values every database/sql sink sends alike: the narrower
// integers as int64 and maps and lists as JSON text. Any other type is refused, so a
// dialect converts its own types first and leaves the rest to Value.
func Value(v any) (any, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case map[string]any, []any, []string:
		b, err := jsonenc.AppendValue(nil, x)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	}
	return nil, fmt.Errorf("unsupported value type %T", v)
}
