package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
)

// insertSecrets stores a new run's sealed secret values in the transaction of its insert.
func insertSecrets(ctx context.Context, tx bun.Tx, rec *runs.Record) error {
	now := time.Now().UnixMilli()
	for n, ct := range rec.Secrets {
		if _, err := tx.NewRaw("INSERT INTO sluice_sealed_secrets (run_id, n, value, created_at) VALUES (?, ?, ?, ?)",
			rec.ID, n, base64.StdEncoding.EncodeToString(ct), now).Exec(ctx); err != nil {
			return fmt.Errorf("store sealed secret %d of run %s: %w", n, rec.ID, err)
		}
	}
	return nil
}

// SealedSecrets returns the sealed secret values of a run, index n = the n of its
// ${sealed:n} tokens; none once the run is terminal.
func (s *Store) SealedSecrets(ctx context.Context, runID string) ([][]byte, error) {
	var rows []struct {
		N     int    `bun:"n"`
		Value string `bun:"value"`
	}
	if err := s.db.NewRaw("SELECT n, value FROM sluice_sealed_secrets WHERE run_id = ? ORDER BY n", runID).
		Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("read the sealed secrets of run "+runID, err)
	}
	out := make([][]byte, len(rows))
	for i, r := range rows {
		if r.N != i {
			return nil, fmt.Errorf("run %s: sealed secret %d is missing: %w", runID, i, runs.ErrVaultTampered)
		}
		b, err := base64.StdEncoding.DecodeString(r.Value)
		if err != nil {
			return nil, fmt.Errorf("run %s: sealed secret %d is not base64: %w", runID, i, runs.ErrVaultTampered)
		}
		out[i] = b
	}
	return out, nil
}
