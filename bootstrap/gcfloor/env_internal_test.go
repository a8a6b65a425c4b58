package gcfloor

import (
	"os"
	"testing"
)

// unsetGOGC removes GOGC from the environment for the test (t.Setenv can only set it) and
// puts back what was there.
func unsetGOGC(t *testing.T) {
	t.Helper()
	old, had := os.LookupEnv("GOGC")
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if had {
			_ = os.Setenv("GOGC", old)
		}
	})
}
