package suites

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

// Sizes of the cluster suite. They are fixed rather than taken from --rows: the suite
// measures runs and latencies, not rows.
const (
	submitWorkers    = 16
	pickupSamples    = 200
	pollPickups      = 40
	cancelSamples    = 50
	pollCancels      = 20
	failoverSamples  = 10
	latencyTimeout   = 30 * time.Second
	burnTimeout      = 5 * time.Minute
	pickupSpacing    = 30 * time.Millisecond // more than the 25 ms NOTIFY coalescing
	clusterLeaseSecs = 30                    // the default, for everything but failover
)

// Cluster measures `sluice serve --cluster` on PostgreSQL: how fast 1, 2 and 3 members
// burn down pre-submitted runs, how soon a run submitted on one member is picked up by
// another (NOTIFY and --poll-only), how soon a cancel sent to a member that does not own
// the run stops it, and how long a kill -9 takes to fail over.
func Cluster() harness.Suite {
	return harness.Suite{
		Name: "cluster",
		Description: "sluice serve --cluster on PostgreSQL: burn-down runs/s with 1-3 members, pickup and cross-member " +
			"cancel latency (NOTIFY and --poll-only), kill -9 failover (needs a PostgreSQL URL)",
		Table: measureCluster,
	}
}

type clusterBench struct {
	env  *harness.Env
	base string // PostgreSQL URL
	rows [][]string
}

func measureCluster(ctx context.Context, env *harness.Env) (harness.Table, error) {
	base, err := lookupURL(EnvBenchPostgres, envTestPostgres)
	if err != nil {
		return harness.Table{}, err
	}
	slots, err := burnSlots(os.Getenv(EnvBenchBurnSlots))
	if err != nil {
		return harness.Table{}, err
	}
	sizes, err := burnSizes(os.Getenv(EnvBenchBurnRuns))
	if err != nil {
		return harness.Table{}, err
	}
	rounds, err := burnRounds(os.Getenv(EnvBenchBurnRounds))
	if err != nil {
		return harness.Table{}, err
	}
	b := &clusterBench{env: env, base: base}
	parts := clusterParts(os.Getenv(EnvBenchClusterParts))
	if parts["burn"] {
		if err := b.burns(ctx, slots, sizes, rounds); err != nil {
			return harness.Table{}, err
		}
	}
	for _, pollOnly := range []bool{false, true} {
		if !parts["latency"] {
			break
		}
		if err := b.latencies(ctx, pollOnly); err != nil {
			return harness.Table{}, fmt.Errorf("latencies (poll-only %v): %w", pollOnly, err)
		}
	}
	ttls, err := failoverTTLs(os.Getenv(EnvBenchFailoverTTLs))
	if err != nil {
		return harness.Table{}, err
	}
	for _, ttl := range ttls {
		if !parts["failover"] {
			break
		}
		if err := b.failover(ctx, ttl); err != nil {
			return harness.Table{}, fmt.Errorf("failover (--lease-ttl-secs %d): %w", ttl, err)
		}
	}
	env.Note("One PostgreSQL history (schema %s, recreated per measurement); members are `sluice serve --cluster` processes on loopback ports of this machine, started by the suite.", clusterSchema)
	env.Note("Burn-down: trivial runs (generate 1 row → stdout), as many as the row says (%s, default %s), submitted first through a member whose only slot is busy; the members under test start, a CHECKPOINT puts the next WAL-triggered checkpoint at the same point of every burn-down, and one UPDATE gives the runs to the pool the members serve; runs/s = runs / (last finished_at − first claimed_at). --max-concurrent-runs (slots) per member as the row says (%s, default %s). With %s above 1 the 1-, 2- and 3-member burn-downs take turns that many times, each round starting with the next member count, and a row gives the median (its CPU and batch columns are the median burn-down's) and the range; \"vs 1 member\" compares the medians.",
		EnvBenchBurnRuns, defaultBurnRuns, EnvBenchBurnSlots, defaultBurnSlots, EnvBenchBurnRounds)
	env.Note("Pickup = claimed_at − created_at of a run submitted to a member that cannot claim it (it serves another pool), so the claimer learns of it by NOTIFY or by polling (--cluster-poll-secs 1); submissions %s apart.", pickupSpacing)
	env.Note("Cancel = finished_at (status cancelled) − when POST /v1/runs/{id}/cancel was sent to the member that does not own the run: flag, notification, token, page boundary and the fenced finish.")
	env.Note("Failover = claimed_at of the next attempt − the kill -9 of the owner, %d kills per --lease-ttl-secs: the lease runs out (at most a TTL after the kill: the last renewal came before it), then the peer, whose lease loop woke for that expiry, reclaims the run and claims it again.", failoverSamples)
	env.Note("CPU (burn-down rows), from /proc between the hand-over UPDATE and the last run's end: busy = the whole machine's non-idle share of all %d CPUs; then cores used (CPU seconds per second) by the burning members, by PostgreSQL (every postgres process, exited backends included) and by everything else (the intake member, this suite, other work on the machine).", runtime.NumCPU())
	env.Note("Where a trivial run's time goes (PostgreSQL, counted once with a statement hook (store.Options.QueryHook) in a throwaway build of the burning members; 1 member, 10,000 runs): 2,310 finish transactions — 1,896 batches of ~5 runs (finishes of runs that end together share one; a second starts beside a busy one once 4 wait), each BEGIN, one statement locking every key of the batch, ONE statement that ends every run of it (each row fenced as a single finish; it closes the attempts, inserts the log lines and reads each key's queued run), COMMIT; and 414 lone finishes of the same shape; 2,059 claims (~4.9 runs a claim: a backlogged member gathers freed slots); 286 NOTIFYs (the done channel's, coalesced to one per 25 ms; since migration 0027 only a followed run's end is announced, so a burn-down nobody follows sends none): ≈ 1.2 round trips (BEGIN and COMMIT included) and ≈ 0.44 commits per run. With one UPDATE per run inside the batch it was ≈ 2 round trips and 0.5 commits per run; before the group commit every finish was its own transaction of 4 round trips, ≈ 4.3 round trips and 1.25 commits per run with the claims. 3 members: the same per run (~4–5 runs per finish transaction and per claim each). Claim and finish both change status, so neither is a HOT update: each inserts into every index of sluice_runs whose predicate holds.")
	env.Note("Runs per claim and per finish transaction, KiB allocated per run and GCs per 1,000 runs (burn-down rows): what the burning members' /metrics counters grew by during the burn-down — sluice_serve_claim_batch_runs and sluice_serve_finish_batch_runs (sum ÷ count), go_memstats_alloc_bytes_total and go_gc_duration_seconds_count — over the runs.")
	env.Note("CPU per run = (members cores + PostgreSQL cores) / runs/s. It is not a fixed cost: it falls as more runs share a claim and a finish statement, so it depends on the slots: ≈ 4.7 runs per claim and ≈ 4.2 per finish transaction with 16 slots, ≈ 29–34 and ≈ 23–25 with 128, the same with one, two or three members (each member's slots stay full from the shared backlog). The members' own CPU was a third garbage collection at Go's default pacing (3.4 collections per 1,000 runs, 44–47 KiB allocated per run: YAML decode a quarter, the finish batch a quarter); the default --gc-heap-floor-mib 64 takes that to about 1 per 1,000 runs and the members' CPU per run down by about a quarter. On the 2-core VM of these notes (its speed moves by up to 1.7×, so rounds alternate): one member with 128 slots made median 5,656 runs/s over 10,000 runs and 4,521 over 100,000 (a long burn-down runs on a growing history: dead index entries of claimed runs, autovacuum); two and three members were level with one within the VM's noise, not above it (−11 %% / −5 %% and −2 %% / −6 %% medians with 128 slots; −0 to +17 %% with 16). In a slower hour, when `river bench -n 100000` made 11,981–15,559 jobs/s (half its 24,679–28,128 of the hour above), one member made median 2,915 runs/s over 10,000 runs and 2,761 over 100,000 (the same 18–23 %% of River), two and three members +11 %% / +7 %% and −11 %% / +1 %%. pg_stat_activity sampled every 20 ms: with one member about one PostgreSQL backend is active and a WAL flush is in progress 39 %% of the time; with three, 2.5 backends want the two cores the members also use, and more of them queue on the same WAL flushes and buffer pages. PostgreSQL's share is mostly write amplification: the claim and the finish each change the status, so neither is a HOT update, and together they inserted 17 index entries per run; migration 0026 (no owner index, the admission index partial on active runs) takes that to 15, and WAL records per run from 27.4–28.0 to 25.2–25.8 (1–3 members, 30,000 runs).")
	env.Note("More members than one, and NOTIFY: until migration 0027 every terminal transition notified the done channel (coalesced per member to one per 25 ms, plus a trailing one). PostgreSQL lets one notifying transaction commit at a time (a server-wide lock from the queue insert to the end of the commit, WAL flush included) and wakes every listener per notification, so the members' finish commits queued on that lock. Now only a followed run's end is announced. Same hour, builds alternating, 30,000 runs, 128 slots, 3 rounds: before, 1 member median 4,548 runs/s, 2 members −18 %%, 3 members −29 %%; after, 4,391, −2 %%, −5 %%. With 0027 and 3 rounds: 100,000 runs 4,423 / −4 %% / −3 %%; 10,000 runs 4,613 / −8 %% / −21 %%, where the members' cold start weighs: per 250 ms from the first claim, one member is at its steady rate after 0.5 s, three run at half of theirs for 1.5 s; perf -a -g over that window has the members at 44–48 %% of the machine (36–38 %% later) and PostgreSQL at 46–49 %% (55–58 %% later), the machine 98 %% busy in both; page faults under the members are 9.2 %% of all samples there and 0.1 %% later (fresh heaps faulting in their pages; a fault is dear on this VM), the allocator 11.5 %% instead of 5.9 %%. On a later VM of the same size, where touching 64 MiB of fresh memory page by page takes 28–35 ms, with rotated rounds and the CHECKPOINT: 100,000 runs 4,062 / +5 %% / +5 %% (3 rounds), 10,000 runs 4,845 / +2 %% / +3 %% (5 rounds), with 16 slots 2,312 / +14 %% / +16 %% and 2,034 / +11 %% / +18 %% (10,000 and 100,000 runs), `river bench -n 100000` 16,349–18,298 jobs/s in that hour (sluice at 22–25 %% of River). Before the rotation and the CHECKPOINT, in that hour, 100,000 runs gave 4,023 / +3 %% / −6 %% while PostgreSQL started a WAL-triggered checkpoint every 30–90 s (its log), landing anywhere in a burn-down, and the 3-member one was always last in its round.")
	env.Note("WAL records and KiB per run (burn-down rows): the records pg_stat_wal counts and the bytes between insert positions (pg_current_wal_insert_lsn), from after the hand-over UPDATE to after the burn-down, over the runs. A backend reports its records at most once a second (an idle one within 10 s) and always when it exits, so the members are stopped and their backends waited out before the second reading. Both are the whole server's, so nothing else may write meanwhile; unlike runs/s and CPU they do not move with the machine's speed.")
	cols := []string{"measure", "members", "samples", "result", "target", "vs 1 member", "busy", "members cores", "PostgreSQL cores", "other cores",
		"runs per claim", "runs per finish tx", "KiB allocated per run", "GCs per 1,000 runs",
		"WAL records per run", "WAL KiB per run"}
	for i, r := range b.rows {
		for len(r) < len(cols) {
			r = append(r, "")
		}
		b.rows[i] = r
	}
	return harness.Table{Columns: cols, Rows: b.rows}, nil
}

// EnvBenchClusterParts narrows the cluster suite to some of its parts (comma separated:
// burn, latency, failover), for measuring one change without the whole table.
const EnvBenchClusterParts = "SLUICE_BENCH_CLUSTER_PARTS"

// EnvBenchFailoverTTLs lists the --lease-ttl-secs values the failover part measures
// (comma separated; default 5,30).
const EnvBenchFailoverTTLs = "SLUICE_BENCH_FAILOVER_TTLS"

// failoverTTLs reads EnvBenchFailoverTTLs.
func failoverTTLs(list string) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		return []int{5, 30}, nil
	}
	return positiveInts(EnvBenchFailoverTTLs, "seconds", list)
}

// positiveInts reads a comma-separated list of whole numbers ≥ 1 from the variable env.
func positiveInts(env, unit, list string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a number of %s ≥ 1", env, p, unit)
		}
		out = append(out, n)
	}
	return out, nil
}

// clusterParts is the set of parts to measure; an empty list means all.
func clusterParts(list string) map[string]bool {
	all := map[string]bool{"burn": true, "latency": true, "failover": true}
	if strings.TrimSpace(list) == "" {
		return all
	}
	out := map[string]bool{}
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); all[p] {
			out[p] = true
		}
	}
	return out
}

func (b *clusterBench) row(measure string, members, samples int, result, target string) {
	b.rows = append(b.rows, []string{measure, strconv.Itoa(members), harness.Thousands(int64(samples)), result, target})
}

func waitRunning(ctx context.Context, db *historyDB) error {
	deadline := time.Now().Add(latencyTimeout)
	for {
		var n int
		if err := db.conn.QueryRow(ctx, `SELECT count(*) FROM sluice_runs WHERE status = 'running'`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the blocking run did not start within %s", latencyTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// latencies measures pickup and cross-member cancel on two members: one that accepts
// submissions and cancels but serves another pool, and one that claims.
func (b *clusterBench) latencies(ctx context.Context, pollOnly bool) error {
	c, err := newBenchCluster(ctx, b.env.Sluice, b.env.Dir, b.base)
	if err != nil {
		return err
	}
	defer c.stop()
	var extra []string
	mode := "NOTIFY"
	if pollOnly {
		extra, mode = []string{"--poll-only"}, "--poll-only"
	}
	front, err := c.start(ctx, "front", append([]string{"--pool", "front"}, extra...)...)
	if err != nil {
		return err
	}
	if _, err := c.start(ctx, "claimer", append([]string{"--max-concurrent-runs", "4"}, extra...)...); err != nil {
		return err
	}
	db, err := c.db(ctx)
	if err != nil {
		return err
	}
	defer db.close()

	samples, cancels := pickupSamples, cancelSamples
	if pollOnly {
		samples, cancels = pollPickups, pollCancels
	}
	b.env.Progress("pickup latency (%s): %d runs", mode, samples)
	var pickups []time.Duration
	for i := range samples {
		id, err := front.submit(ctx, map[string]any{"config": quickRun(fmt.Sprintf("pickup-%d", i))})
		if err != nil {
			return err
		}
		r, err := db.waitRun(ctx, id, latencyTimeout, func(r runTimes) bool { return r.ClaimedAt != nil })
		if err != nil {
			return err
		}
		pickups = append(pickups, time.Duration(*r.ClaimedAt-r.CreatedAt)*time.Millisecond)
		time.Sleep(pickupSpacing)
	}
	pickTarget := [2]string{"< 10 ms", "< 50 ms"}
	if pollOnly {
		pickTarget = [2]string{"≤ poll (1 s)", "≤ poll (1 s)"}
	}
	b.row("pickup p50, "+mode, 2, samples, ms(percentile(pickups, 50)), pickTarget[0])
	b.row("pickup p99, "+mode, 2, samples, ms(percentile(pickups, 99)), pickTarget[1])

	b.env.Progress("cross-member cancel latency (%s): %d runs", mode, cancels)
	var took []time.Duration
	for i := range cancels {
		id, err := front.submit(ctx, map[string]any{"config": slowRun(fmt.Sprintf("cancel-%d", i), 1_000_000, 10)})
		if err != nil {
			return err
		}
		if _, err := db.waitRun(ctx, id, latencyTimeout, func(r runTimes) bool { return r.Status == "running" }); err != nil {
			return err
		}
		sent := time.Now()
		if err := front.cancel(ctx, id); err != nil {
			return err
		}
		r, err := db.waitRun(ctx, id, latencyTimeout, func(r runTimes) bool { return r.Status == "cancelled" })
		if err != nil {
			return err
		}
		took = append(took, time.Duration(*r.FinishedAt-sent.UnixMilli())*time.Millisecond)
	}
	cancelTarget := [2]string{"", "< 100 ms"}
	if pollOnly {
		cancelTarget = [2]string{"", "≤ poll (1 s)"}
	}
	b.row("cancel p50, "+mode, 2, cancels, ms(percentile(took, 50)), cancelTarget[0])
	b.row("cancel p99, "+mode, 2, cancels, ms(percentile(took, 99)), cancelTarget[1])
	return nil
}

// failover kills the owner of a long run failoverSamples times in a chain: each time a
// fresh member is started, the owner is killed, and the fresh member claims the run.
func (b *clusterBench) failover(ctx context.Context, ttlSecs int) error {
	c, err := newBenchCluster(ctx, b.env.Sluice, b.env.Dir, b.base)
	if err != nil {
		return err
	}
	defer c.stop()
	flags := []string{"--lease-ttl-secs", strconv.Itoa(ttlSecs), "--cluster-max-attempts", "100"}
	owner, err := c.start(ctx, "owner-0", flags...)
	if err != nil {
		return err
	}
	db, err := c.db(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	id, err := owner.submit(ctx, map[string]any{"config": slowRun("failover", 1_000_000, 10)})
	if err != nil {
		return err
	}
	if _, err := db.waitRun(ctx, id, latencyTimeout, func(r runTimes) bool { return r.Status == "running" }); err != nil {
		return err
	}
	b.env.Progress("failover (TTL %d s): %d kills", ttlSecs, failoverSamples)
	var took []time.Duration
	for i := range failoverSamples {
		next, err := c.start(ctx, fmt.Sprintf("owner-%d", i+1), flags...)
		if err != nil {
			return err
		}
		nextID, err := db.instanceOf(ctx, next)
		if err != nil {
			return err
		}
		killed := time.Now()
		owner.signal(syscall.SIGKILL)
		r, err := db.waitRun(ctx, id, 3*time.Duration(ttlSecs)*time.Second, func(r runTimes) bool {
			return r.Status == "running" && r.Owner == nextID
		})
		if err != nil {
			return err
		}
		took = append(took, time.Duration(*r.ClaimedAt-killed.UnixMilli())*time.Millisecond)
		owner = next
	}
	b.row(fmt.Sprintf("failover, median (TTL %d s)", ttlSecs), 2, failoverSamples, secs(percentile(took, 50)),
		fmt.Sprintf("≤ %d s", ttlSecs+1))
	b.row(fmt.Sprintf("failover, max (TTL %d s)", ttlSecs), 2, failoverSamples, secs(slices.Max(took)),
		fmt.Sprintf("≤ %d s", ttlSecs+1))
	return nil
}

// percentile is the nearest-rank percentile p of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) string   { return fmt.Sprintf("%d ms", d.Milliseconds()) }
func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func quickRun(name string) string {
	return "version: 1\nname: " + name + "\npipeline:\n  source: {type: generate, config: {count: 1}}\n  sink: {type: stdout}\n"
}

func slowRun(name string, count int, rate float64) string {
	return strings.Join([]string{"version: 1", "name: " + name, "pipeline:",
		fmt.Sprintf("  source: {type: generate, config: {count: %d, rate: %g}}", count, rate),
		"  sink: {type: stdout}", ""}, "\n")
}
