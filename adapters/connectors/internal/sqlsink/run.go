package sqlsink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Execer runs a statement on the database or inside a transaction.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Run is a sink's hold on its database across pages: each page of append, upsert and
// delete commits on its own; overwrite keeps one transaction for the whole run, so the
// table is emptied and refilled at once or not at all.
type Run struct {
	DB       *sql.DB
	Mode     pipeline.WriteMode
	Tx       *sql.Tx // overwrite: the one transaction of the whole run
	Failed   error   // overwrite: a failed page dooms the transaction
	Finished bool
}

// Durability is when written pages become final.
func (r *Run) Durability() execute.Durability {
	if r.Mode == pipeline.Overwrite {
		return execute.AtEnd
	}
	return execute.PerPage
}

// BeginOverwrite starts the run's transaction and, unless empty is "" (no table yet),
// runs empty in it.
func (r *Run) BeginOverwrite(ctx context.Context, empty string) error {
	if r.Tx != nil {
		return nil
	}
	tx, err := r.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if empty != "" {
		if _, err := tx.ExecContext(ctx, empty); err != nil {
			tx.Rollback()
			return fmt.Errorf("empty the table for overwrite: %w", err)
		}
	}
	r.Tx = tx
	return nil
}

// Ending is what Finish needs from the connector.
type Ending struct {
	Name    string // connector type, the messages' prefix
	Table   string // the table as the user wrote it
	Empty   string // the DELETE that empties the table; "" when it does not exist
	Advance func(ctx context.Context, q Execer, pos execute.Position) error
	Explain func(error) error
}

// Finish ends the sink: an overwrite's transaction commits (one without pages still
// empties the table); with pos (a fenced writer) the watermark moves to pos too, in the
// overwrite's transaction or on its own. The database is closed either way.
func (r *Run) Finish(ctx context.Context, pos *execute.Position, e Ending) error {
	if r.Finished {
		return fmt.Errorf("%s: table %q: already committed or aborted", e.Name, e.Table)
	}
	r.Finished = true
	defer r.DB.Close()
	if r.Mode != pipeline.Overwrite {
		if pos == nil {
			return nil
		}
		if err := e.Advance(ctx, r.DB, *pos); err != nil {
			return e.Explain(err)
		}
		return nil
	}
	if r.Failed != nil {
		if r.Tx != nil {
			r.Tx.Rollback()
		}
		return fmt.Errorf("%s: not committing the overwrite after a failed write: %w", e.Name, r.Failed)
	}
	if err := r.BeginOverwrite(ctx, e.Empty); err != nil {
		return e.Explain(err)
	}
	if pos != nil {
		if err := e.Advance(ctx, r.Tx, *pos); err != nil {
			r.Tx.Rollback()
			return e.Explain(err)
		}
	}
	if err := r.Tx.Commit(); err != nil {
		return e.Explain(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// Abandon rolls back an overwrite (pages of the other modes are final already) and
// closes the database; wrap cleans the rollback's error text.
func (r *Run) Abandon(name, table string, wrap func(error) error) error {
	if r.Finished {
		return nil
	}
	r.Finished = true
	var err error
	if r.Tx != nil {
		if rerr := r.Tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			err = fmt.Errorf("%s: table %q: roll back: %w", name, table, wrap(rerr))
		}
	}
	r.DB.Close()
	return err
}
