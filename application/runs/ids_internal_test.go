package runs

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// idTime reads the millisecond timestamp of a UUIDv7 text.
func idTime(t *testing.T, id string) int64 {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	require.NoError(t, err)
	var u [16]byte
	copy(u[:], b)
	return int64(idMillis(u))
}

// A run id carries its created_at (the time given), and stays within IDLead of it
// however the clock moves, while ids keep increasing across small steps back.
func TestRunIDsCarryTheirCreationTimeWithinIDLead(t *testing.T) {
	var v v7Source
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	first, err := v.nextAt(at)
	require.NoError(t, err)
	require.Equal(t, at.UnixMilli(), idTime(t, first), "an id takes the time it is given, not the wall clock")

	same, err := v.nextAt(at)
	require.NoError(t, err)
	require.Greater(t, same, first, "ids of one millisecond increase")

	back := at.Add(-10 * time.Second)
	bumped, err := v.nextAt(back)
	require.NoError(t, err)
	require.Greater(t, bumped, same, "a small step back keeps ids increasing")
	lead := idTime(t, bumped) - back.UnixMilli()
	require.GreaterOrEqual(t, lead, int64(0))
	require.LessOrEqual(t, lead, IDLead.Milliseconds())

	far := at.Add(-IDLead - time.Second)
	fresh, err := v.nextAt(far)
	require.NoError(t, err)
	require.Equal(t, far.UnixMilli(), idTime(t, fresh), "past IDLead the id takes its own time")
	again, err := v.nextAt(far)
	require.NoError(t, err)
	require.Greater(t, again, fresh)
}
