package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
)

var _ templates.Store = (*Store)(nil)

type templateRow struct {
	ID           string         `bun:"id"`
	Version      int            `bun:"version"`
	Config       string         `bun:"config"`
	ConfigSealed bool           `bun:"config_sealed"`
	Pool         sql.NullString `bun:"pool"`
	PoolOverride sql.NullString `bun:"pool_override"`
	Tenants      sql.NullString `bun:"tenants"`
	CreatedBy    string         `bun:"created_by"`
	CreatedAt    int64          `bun:"created_at"`
}

const templateCols = "id, version, config, config_sealed, pool, pool_override, tenants, created_by, created_at"

func (r templateRow) template() (*templates.Template, error) {
	t := &templates.Template{ID: r.ID, Version: r.Version, Config: r.Config, ConfigSealed: r.ConfigSealed,
		Pool: r.Pool.String, CreatedBy: r.CreatedBy, CreatedAt: fromMS(r.CreatedAt)}
	if r.PoolOverride.Valid {
		var v any
		if err := json.Unmarshal([]byte(r.PoolOverride.String), &v); err != nil {
			return nil, fmt.Errorf("template %s: stored pool_override is not JSON: %w", r.ID, err)
		}
		switch x := v.(type) {
		case bool:
			t.PoolOverride = pool.Override{Any: x}
		case []any:
			for _, p := range x {
				if s, ok := p.(string); ok {
					t.PoolOverride.Allowed = append(t.PoolOverride.Allowed, s)
				}
			}
		}
	}
	if r.Tenants.Valid {
		if r.Tenants.String == `"*"` {
			t.AllTenants = true
		} else if err := json.Unmarshal([]byte(r.Tenants.String), &t.Tenants); err != nil {
			return nil, fmt.Errorf("template %s: stored tenants are not a JSON array: %w", r.ID, err)
		}
	}
	return t, nil
}

// AddTemplate stores t as the next version of its id; see templates.Store.
func (s *Store) AddTemplate(ctx context.Context, t *templates.Template) error {
	var override, tenants any
	switch {
	case t.PoolOverride.Any:
		override = "true"
	case len(t.PoolOverride.Allowed) > 0:
		b, _ := json.Marshal(t.PoolOverride.Allowed)
		override = string(b)
	}
	switch {
	case t.AllTenants:
		tenants = `"*"`
	case len(t.Tenants) > 0:
		b, _ := json.Marshal(t.Tenants)
		tenants = string(b)
	}
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		// The pipeline lock of the template id serializes concurrent registrations, so
		// two of them never pick the same version.
		if err := s.lockPipeline(ctx, tx, "template", t.ID); err != nil {
			return err
		}
		var latest sql.NullInt64
		if err := tx.NewRaw("SELECT max(version) FROM sluice_templates WHERE id = ?", t.ID).Scan(ctx, &latest); err != nil {
			return err
		}
		t.Version = int(latest.Int64) + 1
		_, err := tx.NewRaw("INSERT INTO sluice_templates ("+templateCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			t.ID, t.Version, t.Config, t.ConfigSealed, nullIfEmpty(t.Pool), override, tenants, t.CreatedBy,
			t.CreatedAt.UnixMilli()).Exec(ctx)
		return err
	})
	return translate("register template "+t.ID, err)
}

// LatestTemplate returns the newest version of id.
func (s *Store) LatestTemplate(ctx context.Context, id string) (*templates.Template, error) {
	var r templateRow
	err := s.db.NewRaw("SELECT "+templateCols+" FROM sluice_templates WHERE id = ? ORDER BY version DESC LIMIT 1", id).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("template %s: %w", id, run.ErrNotFound)
	}
	if err != nil {
		return nil, translate("read template "+id, err)
	}
	return r.template()
}

// ListTemplates returns the newest version of every template, by id.
func (s *Store) ListTemplates(ctx context.Context) ([]*templates.Template, error) {
	var rows []templateRow
	err := s.db.NewRaw(`SELECT `+templateCols+` FROM sluice_templates t
WHERE version = (SELECT max(version) FROM sluice_templates v WHERE v.id = t.id) ORDER BY id`).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("list templates", err)
	}
	out := make([]*templates.Template, 0, len(rows))
	for _, r := range rows {
		t, err := r.template()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// DeleteTemplate deletes every version of id unless schedules use it or queued or pending
// runs record it.
func (s *Store) DeleteTemplate(ctx context.Context, id string) error {
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.lockPipeline(ctx, tx, "template", id); err != nil {
			return err
		}
		var waiting int
		if err := tx.NewRaw("SELECT count(*) FROM sluice_runs WHERE template_id = ? AND status IN ('queued', 'pending')", id).
			Scan(ctx, &waiting); err != nil {
			return err
		}
		if waiting > 0 {
			return fmt.Errorf("template %s: %d runs wait: %w", id, waiting, templates.ErrInUse)
		}
		var scheduled int
		if err := tx.NewRaw("SELECT count(*) FROM sluice_schedules WHERE template_id = ?", id).Scan(ctx, &scheduled); err != nil {
			return err
		}
		if scheduled > 0 {
			return fmt.Errorf("template %s: %d schedules use it: %w", id, scheduled, templates.ErrInUse)
		}
		res, err := tx.NewRaw("DELETE FROM sluice_templates WHERE id = ?", id).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("template %s: %w", id, run.ErrNotFound)
		}
		return nil
	})
	if errors.Is(err, templates.ErrInUse) || errors.Is(err, run.ErrNotFound) {
		return err
	}
	return translate("delete template "+id, err)
}

// TemplateVersions lists every stored version of id, newest first; see templates.Store.
// It never reads the config column, so no config (sealed or not) leaves the history here.
func (s *Store) TemplateVersions(ctx context.Context, id string) ([]templates.Version, error) {
	var rows []templateRow
	err := s.db.NewRaw(`SELECT id, version, config_sealed, pool, pool_override, tenants, created_by, created_at
FROM sluice_templates WHERE id = ? ORDER BY version DESC`, id).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("list versions of template "+id, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("template %s: %w", id, run.ErrNotFound)
	}
	out := make([]templates.Version, 0, len(rows))
	for _, r := range rows {
		t, err := r.template()
		if err != nil {
			return nil, err
		}
		out = append(out, templates.Version{Version: t.Version, ConfigSealed: t.ConfigSealed, Pool: t.Pool,
			PoolOverride: t.PoolOverride, Tenants: t.Tenants, AllTenants: t.AllTenants,
			CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt})
	}
	return out, nil
}
