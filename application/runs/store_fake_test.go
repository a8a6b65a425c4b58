package runs_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// fakeStore is an in-memory runs.Store that honours the port's contracts: conditional
// cancels, run_key and idempotency uniqueness, the serial admission rule and copies in
// and out (a caller never shares memory with the store).
type fakeStore struct {
	mu      sync.Mutex
	runs    map[string]*runs.Record
	idem    map[string]runs.Idempotency // scope\x00key
	idemRun map[string]string           // scope\x00key → run id
	logs    map[string][]runs.LogLine
	audit   []runs.AuditEntry
	outbox  []outboxRow
	cancels []string // RequestCancel calls

	// claimBeforeCancel makes CancelQueued find the run already claimed (running), as
	// when a member claims it between the service's read and its cancel.
	claimBeforeCancel bool
	// noShardRunning makes RequestCancel of a sharded run end it, as the store does when
	// none of its shards is running.
	noShardRunning bool
	// shardEndsAfterCancel ends a sharded run after RequestCancel set its flag, as the
	// last running shard does when it stops in between the cancel and the re-read.
	shardEndsAfterCancel bool
	shards               map[string][]runs.ShardRecord // by run id
	createErr            error
	auditErr             error
	// ticks maps schedule\x00instant to the tick's run id ("" when skipped); term is the
	// scheduler term tick writes must carry.
	ticks map[string]string
	term  int64
}

type outboxRow struct {
	RunID, URL string
	Payload    []byte
}

func newFakeStore() *fakeStore {
	return &fakeStore{
		runs:    map[string]*runs.Record{},
		idem:    map[string]runs.Idempotency{},
		idemRun: map[string]string{},
		logs:    map[string][]runs.LogLine{},
	}
}

func copyRecord(r *runs.Record) *runs.Record {
	c := *r
	c.Labels = maps.Clone(r.Labels)
	c.Attempts = slices.Clone(r.Attempts)
	if r.Callback != nil {
		cb := *r.Callback
		cb.On = slices.Clone(cb.On)
		cb.ExtraFields = maps.Clone(cb.ExtraFields)
		c.Callback = &cb
	}
	return &c
}

func (s *fakeStore) Create(_ context.Context, rec *runs.Record, idem *runs.Idempotency) (runs.CreateResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.createErr != nil {
		return runs.CreateResult{}, s.createErr
	}
	if idem != nil {
		k := idem.Scope + "\x00" + idem.Key
		if old, ok := s.idem[k]; ok {
			id := s.idemRun[k]
			res := runs.CreateResult{RunID: id, Fingerprint: old.Fingerprint}
			if r, ok := s.runs[id]; ok {
				res.Status = r.Status
			} else {
				res.RunDeleted = true
			}
			return res, nil
		}
	}
	if rec.RunKey != "" {
		for _, r := range s.runs {
			if r.Tenant == rec.Tenant && r.Name == rec.Name && r.RunKey == rec.RunKey {
				return runs.CreateResult{RunID: r.ID, Status: r.Status}, nil
			}
		}
	}
	if _, dup := s.runs[rec.ID]; dup {
		return runs.CreateResult{}, fmt.Errorf("run %s: %w", rec.ID, run.ErrConflict)
	}
	if rec.Audit != nil && s.auditErr != nil {
		return runs.CreateResult{}, s.auditErr // the entry shares the run's transaction
	}
	c := copyRecord(rec)
	c.Audit = nil
	if c.Serial {
		for _, r := range s.runs {
			st := run.Status(r.Status)
			if r.Tenant == c.Tenant && r.Name == c.Name && (st == run.Queued || st.Active()) {
				c.Status = string(run.Queued)
				break
			}
		}
	}
	s.runs[c.ID] = c
	if rec.Audit != nil {
		e := *rec.Audit
		e.Details = maps.Clone(e.Details)
		if e.Details != nil {
			e.Details["status"] = c.Status
		}
		e.Seq = int64(len(s.audit) + 1)
		s.audit = append(s.audit, e)
	}
	if idem != nil {
		k := idem.Scope + "\x00" + idem.Key
		s.idem[k] = *idem
		s.idemRun[k] = c.ID
	}
	return runs.CreateResult{Created: true, RunID: c.ID, Status: c.Status}, nil
}

// CreateTick honours the port's order: term, replay, overlap, run, tick. It is not one
// transaction, which a single-goroutine test does not need.
func (s *fakeStore) CreateTick(ctx context.Context, rec *runs.Record, tick runs.Tick) (runs.CreateResult, error) {
	s.mu.Lock()
	if tick.Epoch != s.term {
		s.mu.Unlock()
		return runs.CreateResult{}, fmt.Errorf("term %d: %w", tick.Epoch, run.ErrLeaseLost)
	}
	if s.ticks == nil {
		s.ticks = map[string]string{}
	}
	k := tick.ScheduleID + "\x00" + tick.Instant.UTC().String()
	if id, ok := s.ticks[k]; ok {
		s.mu.Unlock()
		return runs.CreateResult{RunID: id}, nil
	}
	busy := false
	for _, r := range s.runs {
		st := run.Status(r.Status)
		busy = busy || (r.Tenant == rec.Tenant && r.Name == rec.Name && (st == run.Queued || st.Active()))
	}
	outcome, reason := tick.Overlap.Decide(busy)
	if outcome == schedule.OutcomeSkipped {
		s.ticks[k] = ""
		s.mu.Unlock()
		return runs.CreateResult{Skipped: reason}, nil
	}
	s.mu.Unlock()
	c := copyRecord(rec)
	if outcome == schedule.OutcomeQueued {
		c.Status = string(run.Queued)
	}
	res, err := s.Create(ctx, c, nil)
	if err == nil {
		s.mu.Lock()
		s.ticks[k] = res.RunID
		s.mu.Unlock()
	}
	return res, err
}

func (s *fakeStore) Get(_ context.Context, id string) (*runs.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return nil, fmt.Errorf("run %s: %w", id, run.ErrNotFound)
	}
	return copyRecord(r), nil
}

func (s *fakeStore) List(_ context.Context, f runs.Filter) ([]*runs.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Sorted(maps.Keys(s.runs))
	slices.Reverse(ids) // newest first
	var out []*runs.Record
	for _, id := range ids {
		r := s.runs[id]
		switch {
		case f.After != "" && id >= f.After,
			len(f.Status) > 0 && !slices.Contains(f.Status, r.Status),
			f.Name != "" && r.Name != f.Name,
			f.Pool != "" && r.Pool != f.Pool,
			(f.Tenant != "" || f.TenantSet) && r.Tenant != f.Tenant,
			f.RunKey != "" && r.RunKey != f.RunKey,
			!f.Since.IsZero() && r.CreatedAt.Before(f.Since),
			!f.Until.IsZero() && !r.CreatedAt.Before(f.Until):
			continue
		}
		match := true
		for k, v := range f.Labels {
			if r.Labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		out = append(out, copyRecord(r))
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out, nil
}

func (s *fakeStore) CountQueued(context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.runs {
		if r.Status == string(run.Pending) || r.Status == string(run.Queued) {
			n++
		}
	}
	return n, nil
}

func (s *fakeStore) CancelQueued(_ context.Context, id string, build runs.CallbackBuilder) (*runs.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return nil, false, fmt.Errorf("run %s: %w", id, run.ErrNotFound)
	}
	if s.claimBeforeCancel && r.Status == string(run.Pending) {
		r.Status, r.Owner, r.Attempt = string(run.Running), "peer-1", r.Attempt+1
	}
	if r.Status != string(run.Queued) && r.Status != string(run.Pending) {
		return copyRecord(r), false, nil
	}
	r.Status = string(run.Cancelled)
	r.FinishedAt = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if u, p, ok := build(runs.CallbackInput{
		RunID: r.ID, Name: r.Name, Status: r.Status, Pool: r.Pool, Tenant: r.Tenant,
		RunKey: r.RunKey, Labels: r.Labels, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		Stats: r.Stats, ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage, Callback: r.Callback,
	}); ok {
		s.outbox = append(s.outbox, outboxRow{RunID: r.ID, URL: u, Payload: p})
	}
	return copyRecord(r), true, nil
}

func (s *fakeStore) RequestCancel(_ context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return false, fmt.Errorf("run %s: %w", id, run.ErrNotFound)
	}
	if r.Status != string(run.Running) && r.Status != string(run.Sharded) {
		return false, fmt.Errorf("run %s is %s: %w", id, r.Status, run.ErrConflict)
	}
	r.CancelRequested = true
	s.cancels = append(s.cancels, id)
	if s.noShardRunning && r.Status == string(run.Sharded) {
		r.Status = string(run.Cancelled) // every shard was pending: cancelled with the flag
		return true, nil
	}
	if s.shardEndsAfterCancel && r.Status == string(run.Sharded) {
		r.Status = string(run.Cancelled) // its last shard ended it (a member counted it)
	}
	return false, nil
}

func (s *fakeStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return fmt.Errorf("run %s: %w", id, run.ErrNotFound)
	}
	if !run.Status(r.Status).Terminal() {
		return fmt.Errorf("run %s: %w", id, run.ErrConflict)
	}
	delete(s.runs, id)
	delete(s.logs, id)
	return nil
}

func (s *fakeStore) Shards(_ context.Context, id string, after, limit int) ([]runs.ShardRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []runs.ShardRecord
	for _, sh := range s.shards[id] {
		if sh.Index > after && len(out) < limit {
			out = append(out, sh)
		}
	}
	return out, nil
}

func (s *fakeStore) Logs(_ context.Context, id string, after int64, limit int) ([]runs.LogLine, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []runs.LogLine
	for _, l := range s.logs[id] {
		if l.Seq > after && len(out) < limit {
			out = append(out, l)
		}
	}
	return out, nil
}

func (s *fakeStore) Audit(_ context.Context, e runs.AuditEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.auditErr != nil {
		return s.auditErr
	}
	e.Seq = int64(len(s.audit) + 1)
	s.audit = append(s.audit, e)
	return nil
}

func (s *fakeStore) ListAudit(_ context.Context, after int64, limit int) ([]runs.AuditEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []runs.AuditEntry
	for _, e := range s.audit {
		if e.Seq > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *fakeStore) Purge(_ context.Context, req runs.PurgeRequest) (runs.PurgeResult, error) {
	cutoff := req.RunsBefore
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, r := range s.runs {
		if run.Status(r.Status).Terminal() && r.FinishedAt.Before(cutoff) {
			delete(s.runs, id)
			n++
		}
	}
	return runs.PurgeResult{Runs: n}, nil
}

// helpers for tests

func (s *fakeStore) put(r *runs.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[r.ID] = copyRecord(r)
}

func (s *fakeStore) setStatus(id string, st run.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[id].Status = string(st)
}

func (s *fakeStore) auditActions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.audit {
		out = append(out, e.Action)
	}
	return out
}

func (s *fakeStore) lastAudit() runs.AuditEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.audit[len(s.audit)-1]
}

var _ runs.Store = (*fakeStore)(nil)
