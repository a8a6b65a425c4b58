package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/application/execute"
)

// PlanShards splits the read into key ranges over [MIN, MAX] of source.config.shard.key
// (SPEC §6.2); the key must be an integer column of the query.
func (c *Connector) PlanShards(ctx context.Context, req execute.ReadRequest, n int) ([]execute.ShardSlice, error) {
	raw, key, query, err := sqlspec.ShardRead(req.Config)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	p, err := policy(req.Config)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	conn, sc, err := connect(ctx, req.Reach, raw, p)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, oids := bindArgs(query)
	sd, err := conn.PgConn().Prepare(ctx, "", render(query.Wrap("SELECT * FROM (\n", "\n) AS q"), 1), oids)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", sc.Wrap(pgErr("query: %s", err)))
	}
	cols := make([]string, 0, len(sd.Fields))
	var oid uint32
	found := false
	for _, f := range sd.Fields {
		cols = append(cols, f.Name)
		if f.Name == key && !found {
			oid, found = f.DataTypeOID, true
		}
	}
	if !found {
		return nil, fmt.Errorf("postgres: %w", sqlspec.KeyIsNotAColumn(key, cols))
	}
	switch oid {
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID:
	default:
		name := fmt.Sprintf("type %d", oid)
		if t, ok := conn.TypeMap().TypeForOID(oid); ok {
			name = t.Name
		}
		return nil, fmt.Errorf("postgres: %w", sqlspec.KeyIsNotAnInteger(key, name))
	}
	k := "q." + quote(key)
	b, err := bigints(ctx, conn.PgConn(), query.Wrap("SELECT MIN("+k+")::bigint, MAX("+k+")::bigint FROM (\n", "\n) AS q"))
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", sc.Wrap(pgErr("read the shard key's bounds: %s", err)))
	}
	lo, hi := b[0], b[1]
	if lo == nil || hi == nil {
		return sqlspec.KeyPlan(0, 0, false, n), nil
	}
	return sqlspec.KeyPlan(*lo, *hi, true, n), nil
}

var _ execute.ShardPlanner = (*Connector)(nil)
