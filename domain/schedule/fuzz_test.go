package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain/schedule"
)

// FuzzParse: a cron expression parses to a spec whose next tick is later than now, or
// fails with ErrInvalidCron; it never panics (NUL bytes and invalid UTF-8 included).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/15 1-30/5 * JAN-mar sun", "@daily", "0 0 30 2 *", "a\x00b", "\xff\xfe * * * *"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		spec, err := schedule.Parse(expr)
		if err != nil {
			if !errors.Is(err, schedule.ErrInvalidCron) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if next := spec.Next(now, ny); !next.After(now) {
			t.Fatalf("%q: next tick %s is not after %s", expr, next, now)
		}
	})
}
