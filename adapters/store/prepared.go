package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// The hottest statements of a cluster — the claim and the finish, once per batch and once
// per run — go to PostgreSQL as server-side prepared statements with real parameters.
// Everything else is bun's text with the arguments interpolated, which PostgreSQL parses,
// analyses and plans afresh each time: for these two statements that was a third of the
// whole machine's CPU during a burn-down. Prepared, each connection parses and analyses
// them once and reuses the plan.
//
// Connection poolers in transaction mode may hand each statement to another server
// connection, where the prepared statement does not exist; Options.SimpleProtocol
// (--poll-only, the pooler setting) keeps every statement to the simple protocol.

// preparer is the part of *sql.DB and *sql.Tx a prepared statement runs on.
type preparer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// scanPrepared runs query — bun's form: ? placeholders, {now} — and scans its rows into
// dest as bun would. When the caller says the statement may be prepared (its generic plan
// is sound) and the store prepares (PostgreSQL without SimpleProtocol), it is a cached
// prepared statement on the connection; otherwise it is bun's NewRaw.
func (s *Store) scanPrepared(ctx context.Context, db bun.IDB, mayPrepare bool, dest any, query string, args ...any) error {
	if !mayPrepare || !s.prepare {
		return db.NewRaw(s.q(query), args...).Scan(ctx, dest)
	}
	var on preparer
	switch v := db.(type) {
	case bun.Tx:
		on = v.Tx
	case *bun.DB:
		on = v.DB
	default:
		return fmt.Errorf("prepared statement on %T: not a bun.Tx or *bun.DB", db)
	}
	text := positional(s.q(query))
	params := make([]any, 0, len(args)+1)
	params = append(params, pgx.QueryExecModeCacheStatement)
	for _, a := range args {
		if arr, ok := a.(*pgdialect.ArrayValue); ok {
			a = arr.Value() // pgx encodes Go slices as arrays itself
		}
		params = append(params, a)
	}
	ev := &bun.QueryEvent{Query: text}
	if s.hook != nil {
		ctx = s.hook.BeforeQuery(ctx, ev)
	}
	err := func() error {
		rows, err := on.QueryContext(ctx, text, params...)
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		return s.db.ScanRows(ctx, rows, dest)
	}()
	if s.hook != nil {
		ev.Err = err
		s.hook.AfterQuery(ctx, ev)
	}
	return err
}

// positional turns bun's ? placeholders into PostgreSQL's $1, $2, … in order. Our
// statements have no ? inside string literals or as an operator; a quoted ? is left alone
// all the same.
func positional(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n, quoted := 0, false
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '?' && !quoted:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
