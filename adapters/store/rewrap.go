package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
)

// RewrapFunc re-seals one ciphertext for owner and purpose; changed=false leaves the row.
type RewrapFunc func(ctx context.Context, owner string, purpose runs.Purpose, ciphertext []byte) (out []byte, changed bool, err error)

// Rewrap re-seals every ciphertext of the history with fn (`sluice vault rewrap`, SPEC
// §7.1): sealed run configs, sealed secrets and sealed templates. Each row is updated in
// its own short transaction, so a rewrap can run beside live servers and be resumed; it
// returns how many rows changed. The first row that does not open stops the pass with its
// error (a key missing from --vault-previous-key, or tampering).
func (s *Store) Rewrap(ctx context.Context, fn RewrapFunc) (int, error) {
	changed := 0
	type row struct {
		A string `bun:"a"`
		B string `bun:"b"`
		V string `bun:"v"`
	}
	passes := []struct {
		what, sel, upd string
		args           []any
		bind           func(r row) (string, runs.Purpose, []any)
	}{
		{"run config", "SELECT id AS a, '' AS b, config AS v FROM sluice_runs WHERE config_sealed = ?",
			"UPDATE sluice_runs SET config = ? WHERE id = ? AND config = ?", []any{true},
			func(r row) (string, runs.Purpose, []any) { return r.A, runs.PurposeConfig, []any{r.A} }},
		{"sealed secret", "SELECT run_id AS a, CAST(n AS TEXT) AS b, value AS v FROM sluice_sealed_secrets",
			"UPDATE sluice_sealed_secrets SET value = ? WHERE run_id = ? AND CAST(n AS TEXT) = ? AND value = ?", nil,
			func(r row) (string, runs.Purpose, []any) {
				return r.A, runs.Purpose(string(runs.PurposeSecret) + ":" + r.B), []any{r.A, r.B}
			}},
		{"template", "SELECT id AS a, CAST(version AS TEXT) AS b, config AS v FROM sluice_templates WHERE config_sealed = ?",
			"UPDATE sluice_templates SET config = ? WHERE id = ? AND CAST(version AS TEXT) = ? AND config = ?", []any{true},
			func(r row) (string, runs.Purpose, []any) { return r.A, runs.PurposeTemplate, []any{r.A, r.B} }},
		{"callback", "SELECT run_id AS a, CAST(id AS TEXT) AS b, payload AS v FROM sluice_outbox WHERE url = ?",
			"UPDATE sluice_outbox SET payload = ? WHERE run_id = ? AND CAST(id AS TEXT) = ? AND payload = ?", []any{runs.SealedOutboxURL},
			func(r row) (string, runs.Purpose, []any) { return r.A, runs.PurposeOutbox, []any{r.A, r.B} }},
	}
	for _, p := range passes {
		var rows []row
		if err := s.db.NewRaw(p.sel, p.args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return changed, translate("rewrap: read "+p.what+"s", err)
		}
		for _, r := range rows {
			owner, purpose, keys := p.bind(r)
			ct, err := base64.StdEncoding.DecodeString(r.V)
			if err != nil {
				return changed, fmt.Errorf("rewrap %s of %s: not base64: %w", p.what, owner, runs.ErrVaultTampered)
			}
			out, ok, err := fn(ctx, owner, purpose, ct)
			if err != nil {
				return changed, fmt.Errorf("rewrap %s of %s: %w", p.what, owner, err)
			}
			if !ok {
				continue
			}
			// The old value in the WHERE makes a concurrent change win over this pass.
			upd := append([]any{base64.StdEncoding.EncodeToString(out)}, keys...)
			upd = append(upd, r.V)
			if err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
				_, err := tx.NewRaw(p.upd, upd...).Exec(ctx)
				return err
			}); err != nil {
				return changed, translate("rewrap "+p.what+" of "+owner, err)
			}
			changed++
		}
	}
	return changed, nil
}
