package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/testdb"
)

func TestPostgresPoolHasRoomForEverySlot(t *testing.T) {
	t.Parallel()
	require.Equal(t, 16, pgPoolSize(0), "the base size")
	require.Equal(t, 16, pgPoolSize(2))
	require.Equal(t, 48, pgPoolSize(40), "one per slot plus the loops' and requests' spare")

	url := testdb.Postgres(t)
	s, err := Open(context.Background(), url, Options{Slots: 40})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.Equal(t, 48, s.db.DB.Stats().MaxOpenConnections)
}
