package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/domain/run"
)

// Runs and shards are leased alike (SPEC §4.4): a claim sets owner, epoch and expiry;
// every write about an owned item is fenced on (owner, epoch) and a lease unexpired by
// the database clock; a renewal extends all of a member's leases in one statement; a
// reclaim finds the expired ones. The statements of that engine are written once, over
// a leased table that says which table, which key columns and which Ref type; what
// differs (the domain verbs, the parent of a shard, a run's logs and callback) stays
// with each kind.

// leased describes a table whose rows members lease; R is the port's reference to an
// owned row (cluster.Ref, cluster.ShardRef), its key and the epoch it is held at.
type leased[R any] struct {
	table string
	key   []string // key columns, in keyOf's order
	// keyOf and epochOf read a reference; refOf builds one from a key row.
	keyOf   func(R) []any
	epochOf func(R) int64
	refOf   func(leaseRow) R
	// describe names a reference in errors, e.g. "shard 3 of run X".
	describe func(R) string
}

// leaseRow is what lease statements return: the key columns of either table and the
// epoch. Columns a statement does not return stay zero.
type leaseRow struct {
	ID    string `bun:"id"`
	RunID string `bun:"run_id"`
	Index int    `bun:"shard_index"`
	Epoch int64  `bun:"lease_epoch"`
}

// runLeases is the lease engine over sluice_runs.
func runLeases() leased[cluster.Ref] {
	return leased[cluster.Ref]{
		table:    "sluice_runs",
		key:      []string{"id"},
		keyOf:    func(r cluster.Ref) []any { return []any{r.ID} },
		epochOf:  func(r cluster.Ref) int64 { return r.Epoch },
		refOf:    func(r leaseRow) cluster.Ref { return cluster.Ref{ID: r.ID, Epoch: r.Epoch} },
		describe: func(r cluster.Ref) string { return "run " + r.ID },
	}
}

// shardLeases is the lease engine over sluice_shards.
func shardLeases() leased[cluster.ShardRef] {
	return leased[cluster.ShardRef]{
		table:   "sluice_shards",
		key:     []string{"run_id", "shard_index"},
		keyOf:   func(r cluster.ShardRef) []any { return []any{r.RunID, r.Index} },
		epochOf: func(r cluster.ShardRef) int64 { return r.Epoch },
		refOf: func(r leaseRow) cluster.ShardRef {
			return cluster.ShardRef{RunID: r.RunID, Index: r.Index, Epoch: r.Epoch}
		},
		describe: func(r cluster.ShardRef) string { return fmt.Sprintf("shard %d of run %s", r.Index, r.RunID) },
	}
}

// setCounters writes an owned item's counters; arguments: counterArgs. Counters are the
// current attempt's; elapsed time adds up across attempts (elapsed_base_ms is the
// earlier attempts', set by the claim).
const setCounters = "rows_read = ?, rows_written = ?, pages = ?, bytes = ?, elapsed_ms = elapsed_base_ms + ?"

func counterArgs(p cluster.Progress) []any {
	return []any{p.RowsRead, p.RowsWritten, p.Pages, p.Bytes, p.ElapsedMS}
}

// releaseLease clears an item's lease when it stops being owned.
const releaseLease = "owner = NULL, owner_listen = NULL, lease_expires_at = NULL"

// keyIs is the condition that selects one row by its key; arguments: keyOf.
func (l leased[R]) keyIs() string {
	return strings.Join(l.key, " = ? AND ") + " = ?"
}

// fence is the condition of every write about an owned item: its key, the owner and
// epoch of the claim, and a lease unexpired by the database clock. Arguments: fenceArgs.
func (l leased[R]) fence() string {
	return l.keyIs() + " AND owner = ? AND lease_epoch = ? AND status = 'running' AND lease_expires_at > {now}"
}

// preparedFence is fence for a prepared statement; arguments: preparedFenceArgs. The
// status is an argument, not a literal, so the generic plan cannot prove the predicate
// of the partial indexes over running items (owner, lease): on a literal it judges such
// an index smaller than the primary key and scans all of it, every running item of the
// cluster fetched and filtered, to find the one row the key names.
func (l leased[R]) preparedFence() string {
	return l.keyIs() + " AND owner = ? AND lease_epoch = ? AND status = ? AND lease_expires_at > {now}"
}

func (l leased[R]) preparedFenceArgs(owner string, ref R) []any {
	return append(l.fenceArgs(owner, ref), string(run.Running))
}

// fenceArgs are the arguments of fence for owner's ref.
func (l leased[R]) fenceArgs(owner string, ref R) []any {
	return append(l.keyOf(ref), owner, l.epochOf(ref))
}

// lost is the typed error of a fenced write that matched no row.
func (l leased[R]) lost(ref R) error {
	return fmt.Errorf("%s at epoch %d: %w", l.describe(ref), l.epochOf(ref), run.ErrLeaseLost)
}

// fenced turns the answer of a fenced write into run.ErrLeaseLost when it matched no
// row.
func (l leased[R]) fenced(ref R, res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return l.lost(ref)
	}
	return nil
}

// claim runs a claim statement of the table (the dialect's, in bun's form) for up to n
// items of pools into dest; lead are its arguments before the pools and the batch size.
// It answers false, having done nothing, when there is nothing to ask for.
func (l leased[R]) claim(ctx context.Context, s *Store, query string, owner cluster.Owner, pools []string, n int,
	dest any, lead ...any) (bool, error) {
	if n <= 0 || len(pools) == 0 {
		return false, nil
	}
	if owner.InstanceID == "" {
		return false, fmt.Errorf("claim from %s: the owner has no instance id", l.table)
	}
	query, inPools, prepare := s.inPools(query, pools)
	return true, s.claimRows(ctx, dest, prepare, query, append(lead, inPools, n)...)
}

// renew extends the leases of held in one statement and returns the refs it renewed; a
// ref missing from the answer lost its lease (another epoch, another owner, expired).
func (l leased[R]) renew(ctx context.Context, s *Store, owner string, held []R, ttl time.Duration) ([]R, error) {
	if len(held) == 0 {
		return nil, nil
	}
	cols := strings.Join(l.key, ", ") + ", lease_epoch"
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(l.key)+1), ", ") + ")"
	var b strings.Builder
	args := []any{ttl.Milliseconds(), owner}
	b.WriteString(`UPDATE ` + l.table + ` SET lease_expires_at = {now} + ?
WHERE owner = ? AND status = 'running' AND lease_expires_at > {now}
  AND (` + cols + `) IN (VALUES `)
	for i, r := range held {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
		args = append(append(args, l.keyOf(r)...), l.epochOf(r))
	}
	b.WriteString(") RETURNING " + cols)
	var rows []leaseRow
	if err := s.db.NewRaw(s.q(b.String()), args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	out := make([]R, len(rows))
	for i, r := range rows {
		out[i] = l.refOf(r)
	}
	return out, nil
}

// progress records the counters of an owned item; run.ErrLeaseLost when the fence fails.
func (l leased[R]) progress(ctx context.Context, s *Store, owner string, ref R, p cluster.Progress) error {
	res, err := s.db.NewRaw(s.q(`UPDATE `+l.table+` SET `+setCounters+`
WHERE `+l.fence()), append(counterArgs(p), l.fenceArgs(owner, ref)...)...).Exec(ctx)
	return l.fenced(ref, res, err)
}

// stillRunning is the condition (and its arguments) that re-reads one candidate of
// running under its row lock: it may have been renewed, finished or reclaimed since.
func (l leased[R]) stillRunning(ref R, cond string, condArgs []any) (string, []any) {
	return l.keyIs() + " AND status = 'running' AND " + cond, append(l.keyOf(ref), condArgs...)
}

// running lists (a batch of) the running items that cond (with condArgs) selects, in
// key order, with their epochs: the candidates of a reclaim, each re-checked under its
// row lock.
func (l leased[R]) running(ctx context.Context, s *Store, cond string, condArgs []any) ([]R, error) {
	cols := strings.Join(l.key, ", ")
	var rows []leaseRow
	err := s.db.NewRaw(s.q("SELECT "+cols+", lease_epoch FROM "+l.table+" WHERE status = 'running' AND "+cond+
		" ORDER BY "+cols+" LIMIT ?"), append(append([]any{}, condArgs...), reclaimBatch)...).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	out := make([]R, len(rows))
	for i, r := range rows {
		out[i] = l.refOf(r)
	}
	return out, nil
}
