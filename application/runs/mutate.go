package runs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain/run"
)

// Cancel cancels a run (SPEC §4.6). A queued or pending run ends cancelled at once (its
// callback outbox row is written in the same transaction) and so does nothing to a run
// that is already terminal: both answer immediate=true with the final record. A running
// or sharded run gets its cancel flag set in the history — durable, seen by the owning
// peer and by the shards of a sharded run — and, when it executes in this process, its
// cancel token fired at once; both answer immediate=false: it ends cancelled at its next
// page boundary. A sharded run's pending shards are cancelled at once, so one with no
// shard running ends there and answers immediate=true.
func (s *Service) Cancel(ctx context.Context, p Principal, id string) (rec *Record, immediate bool, err error) {
	if err := canCancel(p); err != nil {
		return nil, false, err
	}
	rec, err = s.lookup(ctx, p, id)
	if err != nil {
		return nil, false, err
	}
	from := rec.Status
	// A queued or pending run may be claimed between the read and the cancel; each
	// branch re-reads what it raced with, and the loop ends within two rounds because a
	// run only moves forward.
	for range 3 {
		// The domain decides: a run someone executes gets its cancel requested, one that
		// waits (queued, pending, waiting for a retry) is cancelled at once, an ended one
		// has nothing to cancel.
		st := run.Status(rec.Status)
		r := run.Rehydrate(rec.Snapshot())
		flag := r.RequestCancel()
		switch {
		case flag != nil && r.Cancel(s.now()) != nil:
			s.auditCancel(ctx, p, rec, from, "already_terminal")
			return strip(rec), true, nil
		case flag != nil:
			got, ok, err := s.deps.Store.CancelQueued(ctx, id, CallbackBuilderFor(s.deps.Sealer))
			if err != nil {
				return nil, false, err
			}
			if got == nil { // the contract returns the record; never trust a nil
				if got, err = s.deps.Store.Get(ctx, id); err != nil {
					return nil, false, err
				}
			}
			rec = got
			if ok {
				s.deps.Watch.Changed(id)
				s.cancelledNow(rec.Name)
				s.auditCancel(ctx, p, rec, from, "cancelled")
				return strip(rec), true, nil
			}
		default: // running, sharded
			ended, err := s.deps.Store.RequestCancel(ctx, id)
			if err == nil {
				if s.deps.Canceller != nil {
					s.deps.Canceller.CancelLocal(id)
				}
				rec.CancelRequested = true
				if ended {
					// A sharded run none of whose shards was running ended with the cancel:
					// no member settles it, so it is counted here.
					s.cancelledNow(rec.Name)
				}
				if st == run.Sharded {
					if now, err := s.deps.Store.Get(ctx, id); err == nil && run.Status(now.Status).Terminal() {
						s.auditCancel(ctx, p, now, from, "cancelled")
						return strip(now), true, nil
					}
				}
				s.auditCancel(ctx, p, rec, from, "requested")
				return strip(rec), false, nil
			}
			if !errors.Is(err, run.ErrConflict) && !errors.Is(err, run.ErrInvalidTransition) {
				return nil, false, err
			}
			// It ended (or was handed back) meanwhile: look again.
			if rec, err = s.deps.Store.Get(ctx, id); err != nil {
				return nil, false, err
			}
		}
	}
	return nil, false, fmt.Errorf("cancel of run %s: its status kept changing (last %s): %w", id, rec.Status, run.ErrConflict)
}

// cancelledNow counts a run this request's cancel ended (SPEC §10).
func (s *Service) cancelledNow(name string) {
	if s.deps.Metrics != nil {
		s.deps.Metrics.RunFinished(name, string(run.Cancelled), "cancelled")
	}
}

func (s *Service) auditCancel(ctx context.Context, p Principal, rec *Record, from, outcome string) {
	s.audit(ctx, p, ActionCancel, rec.ID, map[string]any{
		"outcome": outcome, "from": from, "status": rec.Status,
	})
}

func strip(rec *Record) *Record {
	rec.Config = ""
	return rec
}

// Delete removes a terminal run with its shards, logs and sealed rows (admin only). A
// run that is not terminal is ErrRunNotTerminal.
func (s *Service) Delete(ctx context.Context, p Principal, id string) error {
	if err := need(p, Admin, "delete runs"); err != nil {
		return err
	}
	rec, err := s.lookup(ctx, p, id)
	if err != nil {
		return err
	}
	if !run.Status(rec.Status).Terminal() {
		return fmt.Errorf("run %s is %s: %w", id, rec.Status, ErrRunNotTerminal)
	}
	if err := s.deps.Store.Delete(ctx, id); err != nil {
		if errors.Is(err, run.ErrConflict) {
			return fmt.Errorf("run %s: %w", id, ErrRunNotTerminal)
		}
		return err
	}
	s.audit(ctx, p, ActionDeleted, id, map[string]any{"name": rec.Name, "status": rec.Status, "tenant": rec.Tenant})
	return nil
}

// Rollback submits a new run (trigger kind rollback) from the stored config of run id,
// with its name, tenant, pool, labels, timeout and callback. config replaces the stored
// text when given — needed when the old run's secrets are gone (SPEC §7.5). The new run
// goes through Submit like every other, so every submit check applies.
func (s *Service) Rollback(ctx context.Context, p Principal, id string, config []byte) (SubmitResult, error) {
	if err := need(p, Operator, "roll back runs"); err != nil {
		return SubmitResult{}, err
	}
	rec, err := s.lookup(ctx, p, id)
	if err != nil {
		return SubmitResult{}, err
	}
	text := config
	if len(text) == 0 {
		stored, err := s.openConfig(ctx, rec)
		if err != nil {
			return SubmitResult{}, err
		}
		if strings.Contains(stored, "${sealed:") {
			return SubmitResult{}, invalid("config", "run "+id+" was started with secret params, whose sealed values are deleted once it ends: give the config (with the secrets as params) in the request")
		}
		text = []byte(stored)
	}
	cb, err := OpenCallback(ctx, s.deps.Sealer, rec.ID, rec.Callback)
	if err != nil {
		return SubmitResult{}, err
	}
	return s.Submit(ctx, SubmitRequest{
		Principal:   p,
		TriggerKind: string(run.TriggerRollback),
		Config:      text,
		Name:        rec.Name,
		Labels:      rec.Labels,
		Pool:        rec.Pool,
		TimeoutSecs: rec.TimeoutSecs,
		Retry:       RetryOf(rec.Retry),
		Callback:    cb,
		Tenant:      rec.Tenant,
		RollbackOf:  id,
	})
}

// Purge deletes terminal runs that finished longer than retain ago and idempotency keys
// older than the configured retention (the purge loop calls it). It returns how many
// runs it deleted and audits a purge that deleted any.
func (s *Service) Purge(ctx context.Context, retain time.Duration) (int, error) {
	now := s.now()
	res, err := s.deps.Store.Purge(ctx, PurgeRequest{RunsBefore: now.Add(-retain), IdempotencyBefore: now.Add(-s.cfg.IdempotencyRetention)})
	if err != nil {
		return 0, err
	}
	n := res.Runs
	if n > 0 {
		s.audit(ctx, System, ActionPurged, "", map[string]any{"runs": n, "finished_before": now.Add(-retain).Format(time.RFC3339)})
	}
	return n, nil
}
