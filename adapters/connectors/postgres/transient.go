package postgres

import (
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/reach"
)

// rolledBack reports a failure after which PostgreSQL rolled the page's transaction back
// and the same connection can write the page again: a deadlock or a serialization failure.
func rolledBack(err error) bool {
	switch sqlState(err) {
	case "40001", "40P01":
		return true
	}
	return false
}

// transient marks errors another attempt could get past (SPEC §14.4): rolled-back
// transactions, connection failures (class 08, the server shutting down or not accepting
// connections yet, too many connections), timeouts and dropped connections. Refusals,
// authentication failures and SQL errors stay as they are.
func transient(err error) error {
	if err == nil || execute.IsTransient(err) || reach.CodeOf(err) != "" {
		return err
	}
	if st := sqlState(err); st != "" {
		if rolledBack(err) || strings.HasPrefix(st, "08") || st == "57P01" || st == "57P02" || st == "57P03" || st == "53300" {
			return execute.Transient(err)
		}
		return err
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ne) || errors.As(err, &ce) || pgconn.Timeout(err) || errors.Is(err, io.ErrUnexpectedEOF) {
		return execute.Transient(err)
	}
	return err
}

// policy is the config's retry block; connect and the sink's pages use it.
func policy(c map[string]any) (retry.Policy, error) {
	return retry.Parse(c, retry.Default())
}
