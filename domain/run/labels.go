package run

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain/naming"
)

// Label bounds (SPEC §14.3). A run's labels are stored one row each and every list filter
// on them is one term of the query, so both are capped where a request can raise them.
const (
	MaxLabels         = 64
	MaxLabelValueLen  = 256 // characters
	MaxLabelFilters   = 20
	maxLabelKeyLenDoc = naming.MaxLen
)

// CheckLabels refuses a label set a run may not carry: more than MaxLabels labels, a key
// that is not a name (at most 63 characters), a value longer than MaxLabelValueLen
// characters or holding a NUL byte or invalid UTF-8. limit is MaxLabels for a run's
// labels and MaxLabelFilters for a list filter.
func CheckLabels(labels map[string]string, limit int) error {
	if len(labels) > limit {
		return fmt.Errorf("%d labels given, at most %d are allowed", len(labels), limit)
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if err := naming.Check("label key", k); err != nil {
			return fmt.Errorf("%w (keys are at most %d characters)", err, maxLabelKeyLenDoc)
		}
		v := labels[k]
		if p := naming.TextProblem(v); p != "" {
			return fmt.Errorf("the value of label %q %s", k, p)
		}
		if n := utf8.RuneCountInString(v); n > MaxLabelValueLen {
			return fmt.Errorf("the value of label %q is %d characters long, at most %d are allowed", k, n, MaxLabelValueLen)
		}
	}
	return nil
}
