package runs

import (
	"slices"

	"github.com/sluicehq/sluice/domain/run"
)

// Snapshot is the domain state of a stored run, so the domain's verbs decide what happens
// to it (a cancel here, a reclaim in the store).
func (r *Record) Snapshot() run.Snapshot {
	snap := run.Snapshot{
		ID: r.ID, Name: r.Name, Pool: r.Pool, Tenant: r.Tenant, Labels: r.Labels,
		TriggerKind: run.TriggerKind(r.TriggerKind), RunKey: r.RunKey,
		Status: run.Status(r.Status), Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
		Owner: r.Owner, CancelRequested: r.CancelRequested, CreatedAt: r.CreatedAt,
		ClaimedAt: r.ClaimedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		Retry: r.Retry, NotBefore: r.NotBefore,
	}
	if r.ErrorCode != "" {
		snap.Error = &run.Error{Code: run.ErrorCode(r.ErrorCode), Message: r.ErrorMessage}
	}
	snap.Attempts = slices.Clone(r.Attempts)
	return snap
}
