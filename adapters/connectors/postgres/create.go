package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// createLockSQL takes a transaction-scoped advisory lock keyed on a table's
// schema-qualified name (the search path's first schema when the name has none). Two
// sessions running CREATE TABLE IF NOT EXISTS for one new table at once both miss it in
// the catalog and the later one fails on pg_type's or pg_class's unique index (SQLSTATE
// 23505 / 42P07) instead of finding the table there; holding this lock around the
// statement until the creating transaction ends makes the later creator wait for the
// earlier one's commit, after which IF NOT EXISTS sees the table and does nothing.
const createLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended(
	'sluice create_table ' || coalesce($1::text, current_schema()) || '.' || $2::text, 0))`

// createdMeanwhile reports the errors of a CREATE TABLE IF NOT EXISTS that lost the race
// to a creator outside the lock (another program, or a version of sluice without it):
// pg_type's or pg_class's unique index refused the second row type, which it does only
// once the other creator committed, so the table is there.
func createdMeanwhile(err error) bool {
	switch sqlState(err) {
	case "23505", "42P07", "42710":
		return true
	}
	return false
}

// createTable runs stmt, a CREATE TABLE IF NOT EXISTS of t, inside the caller's open
// transaction, which then holds t's creation lock until it ends. A creator outside the
// lock that wins anyway is caught behind a savepoint, so the transaction goes on with
// the table the other one made.
func createTable(ctx context.Context, conn *pgx.Conn, t tableName, stmt string) error {
	var schema any
	if t.schema != "" {
		schema = t.schema
	}
	if _, err := conn.Exec(ctx, createLockSQL, schema, t.name); err != nil {
		return pgErr("lock the table's creation: %s", err)
	}
	if _, err := conn.Exec(ctx, "SAVEPOINT sluice_create"); err != nil {
		return pgErr("%s", err)
	}
	_, err := conn.Exec(ctx, stmt)
	if createdMeanwhile(err) {
		_, err = conn.Exec(ctx, "ROLLBACK TO SAVEPOINT sluice_create")
	}
	if err != nil {
		return pgErr("create table: %s", err)
	}
	return nil
}

// createIfAbsent runs stmt, a CREATE TABLE IF NOT EXISTS of t, in a transaction of its
// own (see createTable).
func createIfAbsent(ctx context.Context, conn *pgx.Conn, t tableName, stmt string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return pgErr("begin: %s", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := createTable(ctx, conn, t, stmt); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return pgErr("commit: %s", err)
	}
	return nil
}
