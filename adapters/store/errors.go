package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/domain/run"
)

// redactor returns a function that removes the credentials of rawURL from a message: the
// URL itself is shown without them, and each secret (the userinfo password, a password
// query parameter) is hidden wherever it appears.
func redactor(rawURL string) func(string) string {
	var secrets []string
	var safe string
	if u, err := url.Parse(rawURL); err == nil {
		c := *u
		if u.User != nil {
			if pw, ok := u.User.Password(); ok {
				secrets = append(secrets, pw)
			}
			c.User = url.User("xxxxx")
		}
		if q := u.Query(); q.Get("password") != "" {
			secrets = append(secrets, q.Get("password"))
			q.Set("password", "xxxxx")
			c.RawQuery = q.Encode()
		}
		if len(secrets) > 0 || u.User != nil {
			safe = c.String()
		}
	} else if _, rest, ok := strings.Cut(rawURL, "password="); ok {
		pw, _, _ := strings.Cut(rest, "&")
		secrets = append(secrets, pw)
	}
	var pairs []string
	if safe != "" {
		pairs = append(pairs, rawURL, safe) // first: the whole URL wins over its parts
	}
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		pairs = append(pairs, sec, "xxxxx")
		if e := url.QueryEscape(sec); e != sec {
			pairs = append(pairs, e, "xxxxx")
		}
	}
	if len(pairs) == 0 {
		return func(msg string) string { return msg }
	}
	return strings.NewReplacer(pairs...).Replace
}

// sqliteCoder is the error of the pure-Go SQLite driver, which reports result codes.
type sqliteCoder interface{ Code() int }

// SQLite result codes that map to typed errors (extended codes included).
const (
	sqliteConstraintPK     = 1555
	sqliteConstraintUnique = 2067
	sqliteConstraintFK     = 787
	sqliteBusy             = 5 // primary codes: the low byte of an extended code
	sqliteLocked           = 6
)

// unavailableState reports the SQLSTATEs of a server that cannot serve right now:
// connection exceptions (class 08), a shutdown or a server still starting (57P01-57P03),
// too many connections (53300) and a cancelled statement (57014, our statement timeout).
func unavailableState(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", "53300", "57014":
		return true
	}
	return strings.HasPrefix(code, "08")
}

// unreachable reports an error of the link to the database rather than of the statement:
// the connection was refused, reset or timed out, or the statement ran out of time.
func unreachable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, pgconn.ErrConnClosed) // a pooled connection the server dropped
}

// translate turns a driver error into the typed errors of domain/run, keeping the driver
// error in the chain for logs. op says what was being done.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	for _, typed := range []error{run.ErrNotFound, run.ErrConflict, run.ErrLeaseLost, run.ErrInvalidTransition, run.ErrUnavailable} {
		if errors.Is(err, typed) {
			return err
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, run.ErrNotFound)
	}
	if sentinel := classify(err); sentinel != nil {
		return fmt.Errorf("%s: %w: %w", op, sentinel, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

func classify(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case pg.Code == "23505": // unique_violation
			return run.ErrConflict
		case pg.Code == "23503": // foreign_key_violation: the row it points at is gone
			return run.ErrNotFound
		case unavailableState(pg.Code):
			return run.ErrUnavailable
		}
		return nil
	}
	var lite sqliteCoder
	if errors.As(err, &lite) {
		switch code := lite.Code(); {
		case code == sqliteConstraintPK, code == sqliteConstraintUnique:
			return run.ErrConflict
		case code == sqliteConstraintFK:
			return run.ErrNotFound
		case code&0xff == sqliteBusy, code&0xff == sqliteLocked:
			return run.ErrUnavailable
		}
	}
	if unreachable(err) {
		return run.ErrUnavailable
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "UNIQUE constraint failed"):
		return run.ErrConflict
	case strings.Contains(msg, "FOREIGN KEY constraint failed"):
		return run.ErrNotFound
	}
	return nil
}
