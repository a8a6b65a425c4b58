package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/application/execute"
)

// PlanShards splits the read into key ranges over [MIN, MAX] of source.config.shard.key
// (SPEC §6.2). SQLite types values, not columns, so the key must hold integers (or NULL)
// in every row of the query.
func (c *Connector) PlanShards(ctx context.Context, req execute.ReadRequest, n int) ([]execute.ShardSlice, error) {
	raw, key, query, err := sqlspec.ShardRead(req.Config)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	p, params, err := splitURL(raw)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	path, err := dbPath(ctx, req.Reach, req.BaseDir, p)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(sqliteshim.ShimName, dsn(path, params, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	defer db.Close()
	describe := query.Wrap("SELECT * FROM (\n", "\n) AS q LIMIT 0")
	rows, err := db.QueryContext(ctx, render(describe), args(describe)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query: %w", err)
	}
	cols, err := rows.Columns()
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("sqlite: query: %w", err)
	}
	if !slices.Contains(cols, key) {
		return nil, fmt.Errorf("sqlite: %w", sqlspec.KeyIsNotAColumn(key, cols))
	}
	k := "q." + quote(key)
	var lo, hi any
	var other int64
	bounds := query.Wrap("SELECT MIN("+k+"), MAX("+k+"), COALESCE(SUM(CASE WHEN "+k+" IS NOT NULL AND typeof("+k+
		") <> 'integer' THEN 1 ELSE 0 END), 0) FROM (\n", "\n) AS q")
	err = db.QueryRowContext(ctx, render(bounds), args(bounds)...).Scan(&lo, &hi, &other)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read the shard key's bounds: %w", err)
	}
	if other > 0 {
		return nil, fmt.Errorf("sqlite: %w", sqlspec.KeyIsNotAnInteger(key, fmt.Sprintf("non-integer (%d rows hold text or real values)", other)))
	}
	l, lok := lo.(int64)
	h, hok := hi.(int64)
	return sqlspec.KeyPlan(l, h, lok && hok, n), nil
}

var _ execute.ShardPlanner = (*Connector)(nil)
