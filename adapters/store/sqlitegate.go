package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
)

// A SQLite file has one writer at a time. Left to SQLite, the connections of one process
// that want to write all sleep in its busy handler and retry at their own pace: the
// handler is not a queue, so under load one writer can lose every retry for the whole
// busy_timeout and fail with SQLITE_BUSY although the others each held the lock for
// milliseconds (four claimers over 1,000 runs did, under two race-enabled test suites).
// writeGate makes the writers of one Store take turns in Go instead, first come first
// served; busy_timeout is left for the writers of other processes (cluster members on a
// shared file, `sluice history purge` beside a server).
//
// Gated: every transaction (they begin IMMEDIATE, so each takes the write lock), and a
// statement outside one unless it is a plain read (SELECT, EXPLAIN, VALUES). A gated
// query holds the gate until its rows are closed: an UPDATE … RETURNING writes as it is
// stepped.
type writeGate struct {
	turn chan struct{}
	wait time.Duration // the longest wait for a turn before the write fails
}

// gateWait bounds the wait for a turn, so that a write issued outside a transaction the
// same goroutine holds (a bug: it could never get its turn) fails instead of hanging.
const gateWait = time.Minute

func newWriteGate(wait time.Duration) *writeGate {
	return &writeGate{turn: make(chan struct{}, 1), wait: wait}
}

// acquire waits for the turn; the returned func gives it back and may be called twice.
func (g *writeGate) acquire(ctx context.Context) (func(), error) {
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("the history is busy: no turn to write within %s (database is locked)", g.wait)
	}
	var once sync.Once
	return func() { once.Do(func() { <-g.turn }) }, nil
}

// readOnly reports a statement that cannot write: it starts with SELECT, EXPLAIN or
// VALUES after blanks and comments. WITH may lead an INSERT, so it counts as a write.
func readOnly(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	for strings.HasPrefix(q, "--") || strings.HasPrefix(q, "/*") {
		end := "\n"
		if strings.HasPrefix(q, "/*") {
			end = "*/"
		}
		i := strings.Index(q, end)
		if i < 0 {
			return false
		}
		q = strings.TrimLeft(q[i+len(end):], " \t\r\n(")
	}
	for _, kw := range []string{"SELECT", "EXPLAIN", "VALUES"} {
		if len(q) >= len(kw) && strings.EqualFold(q[:len(kw)], kw) {
			return true
		}
	}
	return false
}

// gatedConnector opens the driver's connections behind one writeGate.
type gatedConnector struct {
	drv  driver.Driver
	dsn  string
	gate *writeGate
}

func (c *gatedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &gatedConn{conn: conn, gate: c.gate}, nil
}

func (c *gatedConnector) Driver() driver.Driver { return c.drv }

// gatedConn forwards to the driver's connection, taking the gate around writes. The
// driver's connection implements the context interfaces; the fallbacks below keep
// database/sql working if another driver does not.
type gatedConn struct {
	conn    driver.Conn
	gate    *writeGate
	release func() // the open transaction's turn, nil outside one
}

func (c *gatedConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *gatedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var (
		st  driver.Stmt
		err error
	)
	if p, ok := c.conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = c.conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &gatedStmt{Stmt: st, conn: c, write: !readOnly(query)}, nil
}

// Close gives back a turn still held: database/sql may close a connection whose
// transaction broke without ending it.
func (c *gatedConn) Close() error {
	if c.release != nil {
		c.release()
		c.release = nil
	}
	return c.conn.Close()
}

func (c *gatedConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *gatedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	release, err := c.gate.acquire(ctx)
	if err != nil {
		return nil, err
	}
	var tx driver.Tx
	if b, ok := c.conn.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		tx, err = c.conn.Begin() //nolint:staticcheck // the fallback for drivers without BeginTx
	}
	if err != nil {
		release()
		return nil, err
	}
	c.release = release
	return &gatedTx{tx: tx, conn: c}, nil
}

// turn takes the gate for one statement unless it only reads or a transaction of this
// connection already holds it; the returned func is never nil.
func (c *gatedConn) turn(ctx context.Context, write bool) (func(), error) {
	if !write || c.release != nil {
		return func() {}, nil
	}
	return c.gate.acquire(ctx)
}

func (c *gatedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	release, err := c.turn(ctx, !readOnly(query))
	if err != nil {
		return nil, err
	}
	defer release()
	return e.ExecContext(ctx, query, args)
}

func (c *gatedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	return gatedQuery(ctx, c, !readOnly(query), func() (driver.Rows, error) { return q.QueryContext(ctx, query, args) })
}

// gatedQuery runs query with the turn taken for a write, held until its rows close.
func gatedQuery(ctx context.Context, c *gatedConn, write bool, query func() (driver.Rows, error)) (driver.Rows, error) {
	if !write || c.release != nil {
		return query()
	}
	release, err := c.gate.acquire(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := query()
	if err != nil {
		release()
		return nil, err
	}
	return &gatedRows{Rows: rows, release: release}, nil
}

func (c *gatedConn) Ping(ctx context.Context) error {
	if p, ok := c.conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *gatedConn) ResetSession(ctx context.Context) error {
	if r, ok := c.conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *gatedConn) IsValid() bool {
	if v, ok := c.conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// gatedTx gives the turn back when the transaction ends, however it ends.
type gatedTx struct {
	tx   driver.Tx
	conn *gatedConn
}

func (t *gatedTx) Commit() error   { defer t.end(); return t.tx.Commit() }
func (t *gatedTx) Rollback() error { defer t.end(); return t.tx.Rollback() }

func (t *gatedTx) end() {
	if t.conn.release != nil {
		t.conn.release()
		t.conn.release = nil
	}
}

// gatedStmt is a prepared statement that takes the turn when it writes.
type gatedStmt struct {
	driver.Stmt
	conn  *gatedConn
	write bool
}

func (s *gatedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	release, err := s.conn.turn(ctx, s.write)
	if err != nil {
		return nil, err
	}
	defer release()
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	vals, err := plainValues(args)
	if err != nil {
		return nil, err
	}
	return s.Stmt.Exec(vals) //nolint:staticcheck // the fallback for drivers without StmtExecContext
}

func (s *gatedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return gatedQuery(ctx, s.conn, s.write, func() (driver.Rows, error) {
		if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
			return q.QueryContext(ctx, args)
		}
		vals, err := plainValues(args)
		if err != nil {
			return nil, err
		}
		return s.Stmt.Query(vals) //nolint:staticcheck // the fallback for drivers without StmtQueryContext
	})
}

func plainValues(args []driver.NamedValue) ([]driver.Value, error) {
	vals := make([]driver.Value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, errors.New("named parameters need a driver with StmtExecContext")
		}
		vals[i] = a.Value
	}
	return vals, nil
}

// gatedRows gives the turn back when the rows are closed; column types are forwarded.
type gatedRows struct {
	driver.Rows
	release func()
}

func (r *gatedRows) Close() error { defer r.release(); return r.Rows.Close() }

func (r *gatedRows) ColumnTypeScanType(i int) reflect.Type {
	if c, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return c.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func (r *gatedRows) ColumnTypeDatabaseTypeName(i int) string {
	if c, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return c.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *gatedRows) ColumnTypeNullable(i int) (bool, bool) {
	if c, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return c.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *gatedRows) ColumnTypeLength(i int) (int64, bool) {
	if c, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return c.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *gatedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if c, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return c.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}
