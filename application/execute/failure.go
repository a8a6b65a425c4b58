package execute

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain/run"
)

// Roles a Failure can name. A failure outside any connector (a timeout) has no role.
const (
	RoleSource = "source"
	RoleSink   = "sink"
	RoleState  = "state"
)

// Failure is why a run stopped without success. Its message names the connector, the page
// and the cause (SPEC §1.5) so an operator can tell which side broke and where, e.g.
// "sink sqlite: page 3: UNIQUE constraint failed".
type Failure struct {
	Code      run.ErrorCode
	Connector string // connector type; empty for state and timeouts
	Role      string // RoleSource, RoleSink, RoleState or ""
	Page      int    // 1-based page the failure happened on; 0 when not tied to a page
	Err       error
}

func (f *Failure) Error() string {
	parts := make([]string, 0, 3)
	if who := strings.TrimSpace(f.Role + " " + f.Connector); who != "" {
		parts = append(parts, who)
	}
	if f.Page > 0 {
		parts = append(parts, "page "+strconv.Itoa(f.Page))
	}
	if f.Err != nil {
		parts = append(parts, f.Err.Error())
	} else {
		parts = append(parts, string(f.Code))
	}
	return strings.Join(parts, ": ")
}

func (f *Failure) Unwrap() error { return f.Err }

// PanicError is a recovered panic inside a connector. It is kept apart from ordinary
// errors so callers can log the stack, which is never part of the message.
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// timeoutError is the cause of a timeout Failure; it matches context.DeadlineExceeded.
type timeoutError struct {
	limit string
	pages int64
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("run timed out after %s (%d pages confirmed)", e.limit, e.pages)
}

func (e *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// errTimeout is the cancellation cause the executor installs for Job.Timeout, so a timeout
// is told apart from a cancellation by the caller.
var errTimeout = errors.New("run timed out")

// safely runs f and turns a panic into a *PanicError, so a broken connector fails only its
// run and never the process (SPEC §1.3).
func safely(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: stack()}
		}
	}()
	return f()
}
