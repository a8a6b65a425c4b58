package execute

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

// connectors looks up both sides before anything is opened, so a config naming an
// unknown type fails without touching the source.
func connectors(reg Registry, cfg *pipeline.Config) (SourceConnector, SinkConnector, error) {
	if reg == nil {
		return nil, nil, &Failure{Code: run.CodeConfigError, Err: errors.New("no connector registry")}
	}
	src, ok := reg.Source(cfg.Source.Type)
	if !ok {
		return nil, nil, &Failure{Code: run.CodeConfigError, Role: RoleSource, Connector: cfg.Source.Type,
			Err: fmt.Errorf("unknown source type %q", cfg.Source.Type)}
	}
	snk, ok := reg.Sink(cfg.Sink.Type)
	if !ok {
		return nil, nil, &Failure{Code: run.CodeConfigError, Role: RoleSink, Connector: cfg.Sink.Type,
			Err: fmt.Errorf("unknown sink type %q", cfg.Sink.Type)}
	}
	return src, snk, nil
}

func openSource(ctx context.Context, c SourceConnector, req ReadRequest) (Source, error) {
	var src Source
	err := safely(func() error {
		var err error
		src, err = c.OpenSource(ctx, req)
		return err
	})
	if err == nil && src == nil {
		err = errors.New("connector returned no source")
	}
	return src, err
}

func openSink(ctx context.Context, c SinkConnector, req WriteRequest) (Sink, error) {
	var snk Sink
	err := safely(func() error {
		var err error
		snk, err = c.OpenSink(ctx, req)
		return err
	})
	if err == nil && snk == nil {
		err = errors.New("connector returned no sink")
	}
	return snk, err
}

// incremental loads the bookmark of an incremental job. A bookmark recorded for another
// cursor column is refused: resuming from it would silently skip or repeat rows.
func (r *runner) incremental(ctx context.Context) (*Incremental, error) {
	if r.cfg.Replication.Type != pipeline.Incremental {
		return nil, nil
	}
	if r.job.State == nil || r.job.StateKey == "" {
		return nil, &Failure{Code: run.CodeConfigError, Role: RoleState,
			Err: errors.New("incremental replication needs a state store and a state key")}
	}
	b, err := r.job.State.Load(ctx, r.job.StateKey)
	if err != nil {
		return nil, &Failure{Code: run.CodePipelineError, Role: RoleState,
			Err: fmt.Errorf("load bookmark %q: %w", r.job.StateKey, err)}
	}
	if err := r.sameCursor(b, RoleState); err != nil {
		return nil, err
	}
	return &Incremental{Cursor: r.cfg.Replication.Cursor, After: b}, nil
}

// sameCursor refuses a bookmark recorded for another cursor column and names a bare
// bookmark's cursor.
func (r *runner) sameCursor(b *state.Bookmark, role string) error {
	cursor := r.cfg.Replication.Cursor
	if b != nil && b.Cursor != "" && b.Cursor != cursor {
		return &Failure{Code: run.CodeConfigError, Role: role, Err: fmt.Errorf(
			"bookmark %q is for cursor %q but replication.cursor is %q; set state.key to start a new bookmark",
			r.job.StateKey, b.Cursor, cursor)}
	}
	if b != nil && b.Cursor == "" {
		b.Cursor = cursor
	}
	return nil
}

func (r *runner) readRequest(incr *Incremental) ReadRequest {
	return ReadRequest{
		Config:      r.cfg.Source.Config,
		BatchSize:   int(r.cfg.Source.Int("batch_size", DefaultBatchSize)),
		Incremental: incr,
		BaseDir:     r.job.BaseDir,
		Log:         r.log.With("role", RoleSource, "connector", r.cfg.Source.Type),
		Shard:       r.job.Shard,
		Reach:       r.reachOf(RoleSource),
	}
}

func (r *runner) writeRequest() WriteRequest {
	return WriteRequest{
		Config:    r.cfg.Sink.Config,
		BaseDir:   r.job.BaseDir,
		Log:       r.log.With("role", RoleSink, "connector", r.cfg.Sink.Type),
		Bookmarks: r.cfg.Replication.Type == pipeline.Incremental,
		Reach:     r.reachOf(RoleSink),
		Run:       r.job.Run,
		Shard:     r.job.Shard,
	}
}

// Probe opens the job's source and sink and releases them without moving a row
// (`sluice validate --connect`): for SQL connectors this checks that the database
// answers and the credentials work. The sink is aborted so nothing is left behind.
func (e *Executor) Probe(ctx context.Context, job Job) error {
	r := &runner{job: job, cfg: job.Config, log: e.logger(job), reach: e.reachFor}
	if r.cfg == nil {
		return &Failure{Code: run.CodeConfigError, Err: errors.New("no pipeline config")}
	}
	srcConn, snkConn, err := connectors(e.Registry, r.cfg)
	if err != nil {
		return err
	}
	var incr *Incremental
	if r.cfg.Replication.Type == pipeline.Incremental {
		incr = &Incremental{Cursor: r.cfg.Replication.Cursor}
	}
	src, err := openSource(ctx, srcConn, r.readRequest(incr))
	if err != nil {
		return r.fail(RoleSource, 0, fmt.Errorf("open: %w", err))
	}
	r.closeSource(src)
	snk, err := openSink(ctx, snkConn, r.writeRequest())
	if err != nil {
		return r.fail(RoleSink, 0, fmt.Errorf("open: %w", err))
	}
	r.abort(context.WithoutCancel(ctx), snk)
	return nil
}

// reachOf is the Reach of role's connector; a runner built without an executor gets an
// unconfined one.
func (r *runner) reachOf(role string) Reach {
	if r.reach == nil {
		return Unconfined{}
	}
	return r.reach(role)
}
