package suites

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

// EnvBenchBurnSlots lists the --max-concurrent-runs of the burn-down members (comma
// separated; default defaultBurnSlots), each measured with 1, 2 and 3 members: a member of
// trivial runs is bound by how many it has in flight (and so how many share a claim or a
// finish statement), so the slots are part of what a burn-down row measures.
const EnvBenchBurnSlots = "SLUICE_BENCH_BURN_SLOTS"

const defaultBurnSlots = "16,128"

// EnvBenchBurnRuns lists how many runs each burn-down submits (comma separated; default
// defaultBurnRuns). A short burn-down is dominated by how fast members start claiming; a
// long one by the steady state, and by the history growing under it (dead index entries
// of claimed runs, autovacuum).
const EnvBenchBurnRuns = "SLUICE_BENCH_BURN_RUNS"

const defaultBurnRuns = "10000,100000"

// EnvBenchBurnRounds repeats every burn-down this many times (default 1), the 1-, 2- and
// 3-member burn-downs of a size taking turns, so a machine whose speed drifts (a shared
// VM) weighs on each member count alike; a row then gives the median and the range.
const EnvBenchBurnRounds = "SLUICE_BENCH_BURN_ROUNDS"

// burnSlots reads EnvBenchBurnSlots.
func burnSlots(list string) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		list = defaultBurnSlots
	}
	return positiveInts(EnvBenchBurnSlots, "slots", list)
}

// burnSizes reads EnvBenchBurnRuns.
func burnSizes(list string) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		list = defaultBurnRuns
	}
	return positiveInts(EnvBenchBurnRuns, "runs", list)
}

// burnRounds reads EnvBenchBurnRounds.
func burnRounds(v string) (int, error) {
	if strings.TrimSpace(v) == "" {
		return 1, nil
	}
	n, err := positiveInts(EnvBenchBurnRounds, "rounds", v)
	if err != nil || len(n) != 1 {
		return 0, fmt.Errorf("%s: %q is not one number of rounds ≥ 1", EnvBenchBurnRounds, v)
	}
	return n[0], nil
}

// burnResult is one burn-down.
type burnResult struct {
	perSec              float64
	wall                time.Duration
	cpu                 cpuUse
	perClaim, perFinish float64
	// allocKB is what the members' Go heaps allocated per run (KiB), and gcPerK their
	// garbage collections per 1,000 runs: with many short runs, GC is a large share of a
	// member's CPU.
	allocKB, gcPerK float64
	// walRecords and walBytes are what PostgreSQL wrote to its WAL per run: unlike the
	// rates and CPU seconds they do not move with the machine's speed, so they show a
	// change to the statements or indexes that the VM's noise would hide.
	walRecords, walBytes float64
}

// burns measures every slot count and size with 1, 2 and 3 members, rounds times, and
// adds one row per slot count, size and member count.
func (b *clusterBench) burns(ctx context.Context, slots, sizes []int, rounds int) error {
	for _, perMember := range slots {
		for _, runs := range sizes {
			got := map[int][]burnResult{}
			for round := range rounds {
				for _, n := range burnOrder(round) {
					if rounds > 1 {
						b.env.Progress("burn-down round %d of %d", round+1, rounds)
					}
					r, err := b.burnDown(ctx, n, perMember, runs)
					if err != nil {
						return fmt.Errorf("burn-down of %d runs with %d member(s), %d slots: %w", runs, n, perMember, err)
					}
					got[n] = append(got[n], r)
				}
			}
			one := medianRate(got[1])
			for n := 1; n <= burnMaxMembers; n++ {
				b.burnRow(n, perMember, runs, got[n], one)
			}
		}
	}
	return nil
}

// burnMaxMembers is the most members a burn-down has: every size is measured with 1 to it.
const burnMaxMembers = 3

// burnOrder is the order of the member counts in a round: each round starts with the
// next one, so no count is always first or last of a round while the machine drifts.
func burnOrder(round int) []int {
	out := make([]int, burnMaxMembers)
	for i := range out {
		out[i] = (i+round)%burnMaxMembers + 1
	}
	return out
}

// burnRow adds the row of n members: the median burn-down (its CPU and batches), the
// range when there were several, and how it compares with one member's median.
func (b *clusterBench) burnRow(n, slots, runs int, rs []burnResult, oneMember float64) {
	med := medianBurn(rs)
	result := fmt.Sprintf("%s runs/s (%.2f s)", harness.Thousands(int64(med.perSec+0.5)), med.wall.Seconds())
	if len(rs) > 1 {
		lo := slices.MinFunc(rs, byRate)
		hi := slices.MaxFunc(rs, byRate)
		result = fmt.Sprintf("median %s runs/s (%s–%s, %d rounds)", harness.Thousands(int64(medianRate(rs)+0.5)),
			harness.Thousands(int64(lo.perSec+0.5)), harness.Thousands(int64(hi.perSec+0.5)), len(rs))
	}
	target, versus := "≥ the 1-member row", fmt.Sprintf("%+.0f %%", 100*(medianRate(rs)/oneMember-1))
	if n == 1 {
		target, versus = "≥ 3,000 runs/s (SPEC §14.9)", ""
	}
	b.row(fmt.Sprintf("burn-down of %s runs, %d slots", harness.Thousands(int64(runs)), slots), n, runs*len(rs), result, target)
	row := len(b.rows) - 1
	b.rows[row] = append(b.rows[row], versus)
	b.rows[row] = append(b.rows[row], med.cpu.cells(runtime.NumCPU())...)
	b.rows[row] = append(b.rows[row], fmt.Sprintf("%.1f", med.perClaim), fmt.Sprintf("%.1f", med.perFinish),
		fmt.Sprintf("%.0f", med.allocKB), fmt.Sprintf("%.1f", med.gcPerK),
		fmt.Sprintf("%.1f", med.walRecords), fmt.Sprintf("%.1f", med.walBytes/1024))
}

func byRate(a, b burnResult) int {
	switch {
	case a.perSec < b.perSec:
		return -1
	case a.perSec > b.perSec:
		return 1
	}
	return 0
}

// medianBurn is the burn-down of median throughput (the lower middle one of an even
// count, so it is a real burn-down whose CPU and batches the row can show).
func medianBurn(rs []burnResult) burnResult {
	s := slices.Clone(rs)
	slices.SortFunc(s, byRate)
	return s[(len(s)-1)/2]
}

// medianRate is the median runs/s: the mean of the middle two of an even count.
func medianRate(rs []burnResult) float64 {
	s := slices.Clone(rs)
	slices.SortFunc(s, byRate)
	mid := len(s) / 2
	if len(s)%2 == 0 {
		return (s[mid-1].perSec + s[mid].perSec) / 2
	}
	return s[mid].perSec
}

// burnDown times n members, each with slots --max-concurrent-runs, through runs
// pre-submitted runs.
func (b *clusterBench) burnDown(ctx context.Context, n, slots, runs int) (burnResult, error) {
	c, err := newBenchCluster(ctx, b.env.Sluice, b.env.Dir, b.base)
	if err != nil {
		return burnResult{}, err
	}
	defer c.stop()
	intake, err := c.start(ctx, "intake", "--max-concurrent-runs", "1", "--max-queued-runs", "0")
	if err != nil {
		return burnResult{}, err
	}
	// One endless run fills the intake member's only slot: it accepts the submissions and
	// claims none of them.
	if _, err := intake.submit(ctx, map[string]any{"config": slowRun("blocker", 1_000_000, 1)}); err != nil {
		return burnResult{}, err
	}
	db, err := c.db(ctx)
	if err != nil {
		return burnResult{}, err
	}
	defer db.close()
	if err := waitRunning(ctx, db); err != nil {
		return burnResult{}, err
	}
	b.env.Progress("burn-down with %d member(s), %d slots: submitting %s runs", n, slots, harness.Thousands(int64(runs)))
	start := time.Now()
	if err := submitMany(ctx, intake, runs); err != nil {
		return burnResult{}, err
	}
	b.env.Progress("submitted in %s; starting %d member(s)", time.Since(start).Round(time.Millisecond), n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	burners := make([]*benchMember, n)
	for i := range n {
		wg.Go(func() {
			burners[i], errs[i] = c.start(ctx, fmt.Sprintf("burner-%d", i), "--pool", "burn",
				"--max-concurrent-runs", strconv.Itoa(slots))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return burnResult{}, err
		}
	}
	pids := make([]int, n)
	for i, m := range burners {
		pids[i] = m.cmd.Process.Pid
	}
	// The submissions wrote hundreds of MB of WAL, and PostgreSQL starts a checkpoint per
	// max_wal_size of it: one would land at a random point of some burn-downs (its writes,
	// and every page's first change after it logged whole) and not of others.
	// Checkpointing first puts the next one at the same point of every burn-down.
	if err := checkpoint(ctx, db); err != nil {
		return burnResult{}, err
	}
	counted, err := readCounters(ctx, burners)
	if err != nil {
		return burnResult{}, err
	}
	before := takeCPU(pids)
	if _, err := db.conn.Exec(ctx, `UPDATE sluice_runs SET pool = 'burn' WHERE status = 'pending' AND name LIKE 'burn-%'`); err != nil {
		return burnResult{}, fmt.Errorf("hand the runs to the burn pool: %w", err)
	}
	walBefore, err := readWAL(ctx, db)
	if err != nil {
		return burnResult{}, err
	}
	// Wake the members at once instead of at their next poll.
	if _, err := db.conn.Exec(ctx, `SELECT pg_notify('sluice_work_`+clusterSchema+`', '')`); err != nil {
		return burnResult{}, err
	}
	if err := waitBurnt(ctx, db); err != nil {
		return burnResult{}, err
	}
	r := burnResult{cpu: cpuBetween(before, takeCPU(pids))}
	after, err := readCounters(ctx, burners)
	if err != nil {
		return burnResult{}, err
	}
	// A backend adds its WAL records to pg_stat_wal at most once a second (an idle one
	// within 10 s), and always when it exits: the members are stopped and their backends
	// waited out before the records are read.
	c.stop()
	waitBackendsGone(ctx, db)
	walAfter, err := readWAL(ctx, db)
	if err != nil {
		return burnResult{}, err
	}
	r.walRecords = float64(walAfter.records-walBefore.records) / float64(runs)
	r.walBytes = float64(walAfter.bytes-walBefore.bytes) / float64(runs)
	grew := after.since(counted)
	if r.perClaim, r.perFinish, err = grew.perBatch(); err != nil {
		return burnResult{}, err
	}
	r.allocKB = grew[allocatedBytes] / 1024 / float64(runs)
	r.gcPerK = grew[collections] * 1000 / float64(runs)
	var first, last int64
	if err := db.conn.QueryRow(ctx, `SELECT min(claimed_at), max(finished_at) FROM sluice_runs WHERE name LIKE 'burn-%'`).
		Scan(&first, &last); err != nil {
		return burnResult{}, err
	}
	r.wall = time.Duration(last-first) * time.Millisecond
	r.perSec = float64(runs) / r.wall.Seconds()
	b.env.Progress("burn-down with %d member(s), %d slots: %.0f runs/s", n, slots, r.perSec)
	return r, nil
}

// checkpoint runs a CHECKPOINT, which needs a superuser or pg_checkpoint (PostgreSQL 15).
func checkpoint(ctx context.Context, db *historyDB) error {
	if _, err := db.conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("CHECKPOINT before the burn-down (the bench's role needs superuser or pg_checkpoint): %w", err)
	}
	return nil
}

// walPosition is where the server's WAL stands: the records its backends have reported
// to pg_stat_wal (PostgreSQL 14 and later) and the bytes up to the insert position. Both
// are the whole server's, so nothing but the burn-down may write while it is measured.
type walPosition struct{ records, bytes int64 }

// readWAL reads the WAL position, first making this connection report its own records
// (the hand-over UPDATE's) where the server can (pg_stat_force_next_flush, PostgreSQL 15).
func readWAL(ctx context.Context, db *historyDB) (walPosition, error) {
	var w walPosition
	_, _ = db.conn.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	if err := db.conn.QueryRow(ctx, `SELECT wal_records, pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint
FROM pg_stat_wal`).Scan(&w.records, &w.bytes); err != nil {
		return w, fmt.Errorf("read pg_stat_wal (PostgreSQL 14 or later): %w", err)
	}
	return w, nil
}

// waitBackendsGone waits (up to backendsGoneWait) until no other client is connected to
// the history's database, so every stopped member's backend has exited and reported its
// WAL records. A client that stays (another session on the same database) only makes the
// wait run out: its records may then be counted late or not at all.
func waitBackendsGone(ctx context.Context, db *historyDB) {
	deadline := time.Now().Add(backendsGoneWait)
	for time.Now().Before(deadline) {
		var others int
		if err := db.conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&others); err != nil || others == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const backendsGoneWait = 15 * time.Second

// waitBurnt waits until no burn-down run is left pending or running, then checks every
// one completed. It looks twice a second, through the status index: a count over every
// run each time would itself cost the history a share of a core in a 100,000-run
// burn-down, and the time measured comes from the runs' own timestamps anyway.
func waitBurnt(ctx context.Context, db *historyDB) error {
	deadline := time.Now().Add(burnTimeout)
	for {
		var left bool
		if err := db.conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM sluice_runs
WHERE status IN ('pending', 'running') AND pool = 'burn')`).Scan(&left); err != nil {
			return err
		}
		if !left {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("runs were still pending or running after %s", burnTimeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
	var done, total int
	if err := db.conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'completed'), count(*) FROM sluice_runs
WHERE name LIKE 'burn-%'`).Scan(&done, &total); err != nil {
		return err
	}
	if done != total {
		return fmt.Errorf("%d of %d runs completed", done, total)
	}
	return nil
}

// submitMany posts n trivial runs through m with submitWorkers clients at once.
func submitMany(ctx context.Context, m *benchMember, n int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, submitWorkers)
	for range submitWorkers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				if _, err := m.submit(ctx, map[string]any{"config": quickRun(fmt.Sprintf("burn-%d", i))}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
