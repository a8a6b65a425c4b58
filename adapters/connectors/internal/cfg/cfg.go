package cfg

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// BatchSizeDefault is the page size when neither the request nor the config sets one.
const BatchSizeDefault = pipeline.BatchSizeDefault

// String returns the string under key, def when absent.
func String(c map[string]any, key, def string) (string, error) {
	v, ok := c[key]
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("config key %q must be a string, got %T", key, v)
	}
	return s, nil
}

// Int returns the integer under key, def when absent. Whole floats are accepted because
// JSON decoders produce them for every number.
func Int(c map[string]any, key string, def int64) (int64, error) {
	v, ok := c[key]
	if !ok || v == nil {
		return def, nil
	}
	switch n := v.(type) {
	case int:
		return int64(n), nil
	case int64:
		return n, nil
	case int32:
		return int64(n), nil
	case uint64:
		if n > math.MaxInt64 {
			break
		}
		return int64(n), nil
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), nil
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
	case string:
		if i, err := strconv.ParseInt(n, 10, 64); err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("config key %q must be an integer, got %v", key, v)
}

// Float returns the number under key; ok is false when the key is absent.
func Float(c map[string]any, key string) (f float64, ok bool, err error) {
	v, present := c[key]
	if !present || v == nil {
		return 0, false, nil
	}
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	case json.Number:
		f, err = n.Float64()
	case string:
		f, err = strconv.ParseFloat(n, 64)
	default:
		err = fmt.Errorf("type %T", v)
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, fmt.Errorf("config key %q must be a number, got %v", key, v)
	}
	return f, true, nil
}

// Bool returns the boolean under key, def when absent.
func Bool(c map[string]any, key string, def bool) (bool, error) {
	v, ok := c[key]
	if !ok || v == nil {
		return def, nil
	}
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		if p, err := strconv.ParseBool(b); err == nil {
			return p, nil
		}
	}
	return false, fmt.Errorf("config key %q must be true or false, got %v", key, v)
}

// Strings returns the list of strings under key (nil when absent). A single string is
// accepted as a one-element list, so `key: id` and `key: [id]` mean the same.
func Strings(c map[string]any, key string) ([]string, error) {
	v, ok := c[key]
	if !ok || v == nil {
		return nil, nil
	}
	switch l := v.(type) {
	case []string:
		return append([]string(nil), l...), nil
	case string:
		return []string{l}, nil
	case []any:
		out := make([]string, len(l))
		for i, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("config key %q must be a list of strings; item %d is %v", key, i, x)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("config key %q must be a list of strings, got %T", key, v)
}

// BatchSize picks a source's page size: the request's when set (the executor may lower
// it to bound memory), else the config's batch_size, else BatchSizeDefault.
func BatchSize(requested int, c map[string]any) (int, error) {
	if requested > 0 {
		return requested, nil
	}
	n, err := Int(c, "batch_size", BatchSizeDefault)
	if err != nil {
		return 0, err
	}
	if n < 1 || n > math.MaxInt32 {
		return 0, fmt.Errorf("config key \"batch_size\" must be between 1 and %d, got %d", math.MaxInt32, n)
	}
	return int(n), nil
}
