package retry

import (
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Field is the `retry` key every connector that reads or writes over a network declares,
// so GET /v1/connectors and `sluice validate` show it.
func Field() pipeline.FieldSpec {
	return pipeline.FieldSpec{Name: Key, Type: pipeline.FieldObject,
		Description: "Per-page retries of transient errors (dropped connections, timeouts, HTTP 429/5xx, deadlocks and " +
			"serialization failures): {attempts: 5, initial_secs: 1, max_secs: 30}, exponential backoff with jitter, " +
			"honouring Retry-After; other errors fail at once."}
}

// Check reports a `retry` block Parse refuses, under path (the connector block's path).
func Check(c map[string]any, path string) pipeline.Errors {
	if _, err := Parse(c, Default()); err != nil {
		return pipeline.Errors{{Path: pipeline.Join(path, Key), Message: err.Error()}}
	}
	return nil
}
