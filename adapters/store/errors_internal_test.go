package store

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/run"
)

// A pooled connection the server dropped surfaces as pgconn's "conn closed", not as a
// network error; it is an outage like any other (503, hand-back), not an internal error.
func TestConnClosedIsUnavailable(t *testing.T) {
	t.Parallel()
	err := translate("read the membership", fmt.Errorf("query: %w", pgconn.ErrConnClosed))
	require.ErrorIs(t, err, run.ErrUnavailable)
	require.ErrorIs(t, err, pgconn.ErrConnClosed, "the driver error stays in the chain for the log")
}
