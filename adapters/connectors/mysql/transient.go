package mysql

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"

	"github.com/go-sql-driver/mysql"

	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/reach"
)

// MySQL error numbers after which the page's transaction is rolled back and can be
// written again: a deadlock, a lock wait timeout (the sink rolls back on any error).
const (
	errDeadlock        = 1213
	errLockWaitTimeout = 1205
)

// rolledBack reports a failure after which the same page can be written again.
func rolledBack(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	return me.Number == errDeadlock || me.Number == errLockWaitTimeout || string(me.SQLState[:]) == "40001"
}

// transient marks errors another attempt could get past (SPEC §14.4): rolled-back
// transactions, dropped or refused connections, too many connections, timeouts.
// Refusals, access denied and SQL errors stay as they are.
func transient(err error) error {
	if err == nil || execute.IsTransient(err) || reach.CodeOf(err) != "" {
		return err
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		// 1040 too many connections, 1053 server shutdown, 2006/2013 gone away / lost.
		if rolledBack(err) || me.Number == 1040 || me.Number == 1053 || me.Number == 2006 || me.Number == 2013 {
			return execute.Transient(err)
		}
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) {
		return execute.Transient(err)
	}
	return err
}

// policy is the config's retry block.
func policy(c map[string]any) (retry.Policy, error) {
	return retry.Parse(c, retry.Default())
}
