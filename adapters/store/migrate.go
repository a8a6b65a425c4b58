package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/uptrace/bun/migrate"

	"github.com/sluicehq/sluice/migrations"
)

// Errors of CheckSchema.
var (
	// ErrSchemaTooNew: the history carries migrations this binary does not know, so a
	// newer sluice migrated it and this one must not write to it.
	ErrSchemaTooNew = errors.New("the history schema is newer than this sluice binary: upgrade sluice, or see `sluice migrate status`")
	// ErrSchemaBehind: migrations this binary needs are not applied yet.
	ErrSchemaBehind = errors.New("the history schema is missing migrations: run `sluice migrate up` (or start serve without --no-migrate)")
)

// The bookkeeping tables of bun/migrate, named like the rest of the history.
const (
	migrationsTable     = "sluice_migrations"
	migrationLocksTable = "sluice_migration_locks"
)

func (s *Store) migrator() (*migrate.Migrator, *migrate.Migrations, error) {
	fsys, dir := fs.FS(migrations.SQLite), "sqlite"
	if s.d.name == DialectPostgres {
		fsys, dir = migrations.Postgres, "postgres"
	}
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, nil, err
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(sub); err != nil {
		return nil, nil, fmt.Errorf("embedded migrations: %w", err)
	}
	return migrate.NewMigrator(s.db, ms,
		migrate.WithTableName(migrationsTable),
		migrate.WithLocksTableName(migrationLocksTable),
		// A migration that fails is not recorded, so the next start retries it.
		migrate.WithMarkAppliedOnSuccess(true),
	), ms, nil
}

// Migrate applies the pending migrations under a lock scoped to this history (the
// schema on PostgreSQL, the file on SQLite), so members starting together migrate once.
// It refuses a history migrated by a newer binary (ErrSchemaTooNew).
func (s *Store) Migrate(ctx context.Context) error {
	s.migrate.Lock()
	defer s.migrate.Unlock()
	unlock, err := s.migrationLock(ctx)
	if err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	defer unlock()
	m, ms, err := s.migrator()
	if err != nil {
		return err
	}
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("migrate: create %s: %s", migrationsTable, s.redact(err.Error()))
	}
	applied, pending, unknown, err := s.status(ctx, m, ms)
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		return fmt.Errorf("%w (unknown migrations: %s)", ErrSchemaTooNew, strings.Join(unknown, ", "))
	}
	if len(pending) == 0 {
		return nil
	}
	group, err := m.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %s", s.redact(err.Error()))
	}
	s.log.Info("history migrated", "dialect", s.d.name, "schema", s.schema,
		"applied", group.Migrations.String(), "already_applied", len(applied))
	return nil
}

// MigrationStatus lists applied and pending migrations as "NNNN_name" (an applied one
// this binary does not know shows as its bare id). It changes nothing.
func (s *Store) MigrationStatus(ctx context.Context) (applied, pending []string, err error) {
	m, ms, err := s.migrator()
	if err != nil {
		return nil, nil, err
	}
	applied, pending, unknown, err := s.status(ctx, m, ms)
	if err != nil {
		return nil, nil, err
	}
	applied = append(applied, unknown...)
	slices.Sort(applied)
	return applied, pending, nil
}

// CheckSchema refuses a history this binary cannot use: ErrSchemaTooNew when it carries
// unknown migrations, ErrSchemaBehind when some are not applied.
func (s *Store) CheckSchema(ctx context.Context) error {
	m, ms, err := s.migrator()
	if err != nil {
		return err
	}
	_, pending, unknown, err := s.status(ctx, m, ms)
	switch {
	case err != nil:
		return err
	case len(unknown) > 0:
		return fmt.Errorf("%w (unknown migrations: %s)", ErrSchemaTooNew, strings.Join(unknown, ", "))
	case len(pending) > 0:
		return fmt.Errorf("%w (pending: %s)", ErrSchemaBehind, strings.Join(pending, ", "))
	}
	return nil
}

// status compares the applied migrations with the embedded ones; unknown are applied
// ids this binary lacks.
func (s *Store) status(ctx context.Context, m *migrate.Migrator, ms *migrate.Migrations) (applied, pending, unknown []string, err error) {
	exists, err := s.tableExists(ctx, migrationsTable)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("migration status: %s", s.redact(err.Error()))
	}
	known := map[string]string{}
	var all []string
	for _, mg := range ms.Sorted() {
		known[mg.Name] = mg.String()
		all = append(all, mg.Name)
	}
	seen := map[string]bool{}
	if exists {
		done, err := m.AppliedMigrations(ctx)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("migration status: %s", s.redact(err.Error()))
		}
		for _, mg := range done {
			seen[mg.Name] = true
			if full, ok := known[mg.Name]; ok {
				applied = append(applied, full)
			} else {
				unknown = append(unknown, mg.Name)
			}
		}
	}
	for _, id := range all {
		if !seen[id] {
			pending = append(pending, known[id])
		}
	}
	slices.Sort(applied)
	slices.Sort(unknown)
	return applied, pending, unknown, nil
}

func (s *Store) tableExists(ctx context.Context, name string) (bool, error) {
	var n int
	q := "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	if s.d.name == DialectPostgres {
		q = "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
	}
	err := s.db.NewRaw(q, name).Scan(ctx, &n)
	return n > 0, err
}
