package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// PlanShards splits the read into key ranges over [MIN, MAX] of source.config.shard.key
// (SPEC §6.2); the key must be an integer column of the query.
func (c *Connector) PlanShards(ctx context.Context, req execute.ReadRequest, n int) ([]execute.ShardSlice, error) {
	raw, key, query, err := sqlspec.ShardRead(req.Config)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	db, sc, err := open(ctx, req.Reach, raw, req.Config)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	defer db.Close()
	types, err := describe(ctx, db, query)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", sc.Wrap(err))
	}
	cols := make([]string, 0, len(types))
	typ := ""
	for _, t := range types {
		cols = append(cols, t.Name())
		if t.Name() == key && typ == "" {
			typ = t.DatabaseTypeName()
		}
	}
	switch {
	case typ == "":
		return nil, fmt.Errorf("mysql: %w", sqlspec.KeyIsNotAColumn(key, cols))
	case !strings.HasSuffix(typ, "INT"): // TINYINT … BIGINT, signed or UNSIGNED
		return nil, fmt.Errorf("mysql: %w", sqlspec.KeyIsNotAnInteger(key, typ))
	}
	k := "q." + quote(key)
	var lo, hi sql.NullInt64
	err = keyBounds(ctx, db, query.Wrap("SELECT MIN("+k+"), MAX("+k+") FROM (\n", "\n) AS q"), &lo, &hi)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", sc.Wrap(fmt.Errorf("read the shard key's bounds (they must fit a signed 64-bit integer): %w", err)))
	}
	return sqlspec.KeyPlan(lo.Int64, hi.Int64, lo.Valid && hi.Valid, n), nil
}

var _ execute.ShardPlanner = (*Connector)(nil)

// keyBounds reads MIN and MAX of the shard key with the query's bind parameters.
func keyBounds(ctx context.Context, db *sql.DB, q pipeline.Statement, lo, hi *sql.NullInt64) error {
	rows, stmt, err := bound(ctx, db, render(q), args(q))
	if err != nil {
		return err
	}
	if stmt != nil {
		defer stmt.Close()
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(lo, hi); err != nil {
		return err
	}
	return rows.Close()
}
