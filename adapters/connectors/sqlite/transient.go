package sqlite

import (
	"errors"

	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
)

// coder is the error of the pure-Go SQLite driver, which reports result codes.
type coder interface{ Code() int }

// Primary result codes of a database another connection holds (extended codes carry
// them in their low byte).
const (
	codeBusy   = 5
	codeLocked = 6
)

// busy reports a write that failed because another connection held the database past
// busy_timeout: nothing of the page was written, and a later attempt may get the lock.
func busy(err error) bool {
	var c coder
	if !errors.As(err, &c) {
		return false
	}
	code := c.Code() & 0xff
	return code == codeBusy || code == codeLocked
}

// transient marks a busy database as transient (SPEC §14.4).
func transient(err error) error {
	if busy(err) && !execute.IsTransient(err) {
		return execute.Transient(err)
	}
	return err
}

// policy is the config's retry block.
func policy(c map[string]any) (retry.Policy, error) {
	return retry.Parse(c, retry.Default())
}
