package run_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/run"
)

func TestClipErrorKeepsFourKiBWithAMarker(t *testing.T) {
	t.Parallel()
	require.Equal(t, "short", run.ClipError("short"))
	exact := strings.Repeat("x", run.MaxErrorText)
	require.Equal(t, exact, run.ClipError(exact))
	long := "open " + strings.Repeat("é", 450_000) // a 900 KB path
	got := run.ClipError(long)
	require.LessOrEqual(t, len(got), run.MaxErrorText)
	require.True(t, utf8.ValidString(got))
	require.True(t, strings.HasPrefix(got, "open éé"))
	require.True(t, strings.HasSuffix(got, "… [truncated: 900005 bytes]"), got[len(got)-40:])
}
