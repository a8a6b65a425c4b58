package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/application/execute"
)

// PlanShards splits the read into key ranges over [MIN, MAX] of source.config.shard.key
// (SPEC §6.2); the key must be an integer column of the query.
func (c *Connector) PlanShards(ctx context.Context, req execute.ReadRequest, n int) ([]execute.ShardSlice, error) {
	raw, key, query, err := sqlspec.ShardRead(req.Config)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	db, sc, err := open(ctx, req.Reach, raw)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT * FROM (\n"+query+"\n) AS q LIMIT 0")
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", sc.Wrap(fmt.Errorf("query: %w", err)))
	}
	types, err := rows.ColumnTypes()
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", sc.Wrap(fmt.Errorf("query: %w", err)))
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
	err = db.QueryRowContext(ctx, "SELECT MIN("+k+"), MAX("+k+") FROM (\n"+query+"\n) AS q").Scan(&lo, &hi)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", sc.Wrap(fmt.Errorf("read the shard key's bounds (they must fit a signed 64-bit integer): %w", err)))
	}
	return sqlspec.KeyPlan(lo.Int64, hi.Int64, lo.Valid && hi.Valid, n), nil
}

var _ execute.ShardPlanner = (*Connector)(nil)
