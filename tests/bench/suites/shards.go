package suites

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

// Sizes of the shards suite. The row count is --rows (SLUICE_BENCH_ROWS): unlike the
// cluster suite, this one moves rows.
const (
	shardSchema = "sluice_bench_shards" // the source and sink tables (the history has its own schema)
	shardCount  = 4
	// shardSlots is --max-concurrent-runs per member: half the shards, so one member runs
	// them in two waves and a second member is needed to run them all at once. With a slot
	// per shard the member that plans the run claims every shard before a peer wakes.
	shardSlots      = shardCount / 2
	shardRunTimeout = 15 * time.Minute
	shardPollEvery  = 100 * time.Millisecond
	shardMaxMembers = 3
	shardSamples    = 3 // runs per row, the fastest reported: other work on a small machine only slows a run down
)

// Shards measures cluster Mode B on PostgreSQL: the same PostgreSQL → PostgreSQL upsert
// of --rows rows, once unsharded and once split into shardCount key-range shards, on 1, 2
// and 3 `sluice serve --cluster` members, with the sink's row count checked after each.
func Shards() harness.Suite {
	return harness.Suite{
		Name: "shards",
		Description: "sluice serve --cluster on PostgreSQL: a --rows PostgreSQL → PostgreSQL upsert unsharded vs " +
			"shard: {count: 4} on 1-3 members, rows/s, speed-up and where the CPU went (needs a PostgreSQL URL)",
		Table: measureShards,
	}
}

// shardCase is one row: how many shards the run asks for (1 = unsharded) and how many
// members serve it.
type shardCase struct {
	Shards, Members int
}

func (c shardCase) label() string {
	if c.Shards <= 1 {
		return "unsharded"
	}
	return fmt.Sprintf("shard: {count: %d}", c.Shards)
}

// shardCases interleaves the runs per member count, so a drift in the machine's load
// touches both sides of each comparison alike.
func shardCases() []shardCase {
	var out []shardCase
	for n := 1; n <= shardMaxMembers; n++ {
		out = append(out, shardCase{Shards: 1, Members: n}, shardCase{Shards: shardCount, Members: n})
	}
	return out
}

// shardResult is what one case measured.
type shardResult struct {
	Wall     time.Duration // the run's finished_at − created_at (history clock)
	Rows     int64         // counted in the sink
	PerOwner []int         // shards claimed per member that claimed any, largest first
	CPU      cpuUse
}

func (r shardResult) rowsPerSec() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Rows) / r.Wall.Seconds()
}

func measureShards(ctx context.Context, env *harness.Env) (harness.Table, error) {
	base, err := lookupURL(EnvBenchPostgres, envTestPostgres)
	if err != nil {
		return harness.Table{}, err
	}
	if err := loadPGSource(ctx, env, base, shardSchema); err != nil {
		return harness.Table{}, err
	}
	cases := shardCases()
	results := make([]shardResult, len(cases))
	for i, c := range cases {
		env.Progress("shards: %s on %d member(s), %s rows", c.label(), c.Members, harness.Thousands(env.Rows))
		res, err := fastestShardCase(ctx, env, base, c)
		if err != nil {
			return harness.Table{}, fmt.Errorf("%s on %d member(s): %w", c.label(), c.Members, err)
		}
		env.Progress("shards: %s on %d member(s): %.0f rows/s in %s", c.label(), c.Members, res.rowsPerSec(),
			res.Wall.Round(time.Millisecond))
		results[i] = res
	}
	rows := shardRows(cases, results, runtime.NumCPU())
	env.Note("%s rows (id bigint primary key, name text, amount double precision, active boolean, created_at timestamptz) in PostgreSQL %s.src, upserted (write_mode: upsert, key: [id], batch_size 10000) into %s.dst, an empty copy of src with its primary key, made afresh for each measurement; the row count of dst is checked against src after each run.",
		harness.Thousands(env.Rows), shardSchema, shardSchema)
	env.Note("Each row starts its members afresh (`sluice serve --cluster`, PostgreSQL history in schema %s, --max-concurrent-runs %d, --log-level warn) and submits one run to the first member; sharded runs add `shard: {count: %d}` and `shard: {key: id}` on the source, so the claiming member plans %d id ranges and every member claims shards.",
		clusterSchema, shardSlots, shardCount, shardCount)
	env.Note("Every row is the fastest of %d runs (each on fresh members and an empty sink), with that run's CPU readings.", shardSamples)
	env.Note("seconds = the run's finished_at − created_at in the history (submit, claim, planning, every shard, the parent's end); rows/s = rows / seconds; speed-up = rows/s over the fastest unsharded run (an unsharded run executes on one member whatever their number, so its rows differ only by what else the machine did). \"shards per member\" counts the shards each member executed (the unsharded run executes on one).")
	env.Note("CPU, from /proc over the same span: busy = the whole machine's non-idle share of all %d CPUs; then cores used (CPU seconds per second) by the members, by PostgreSQL (every postgres process, backends that exited included) and by everything else on the machine.",
		runtime.NumCPU())
	return harness.Table{Columns: []string{"run", "members", "shards per member", "seconds", "rows/s", "speed-up",
		"CPU busy", "members (cores)", "PostgreSQL (cores)", "other (cores)"}, Rows: rows}, nil
}

// shardRows formats the table: speed-up is against the fastest unsharded row.
func shardRows(cases []shardCase, results []shardResult, cpus int) [][]string {
	var base float64
	for i, c := range cases {
		if c.Shards <= 1 {
			base = max(base, results[i].rowsPerSec())
		}
	}
	rows := make([][]string, len(cases))
	for i, c := range cases {
		res := results[i]
		speedup := "—"
		if base > 0 {
			speedup = fmt.Sprintf("%.2f×", res.rowsPerSec()/base)
		}
		row := []string{c.label(), strconv.Itoa(c.Members), perOwner(res.PerOwner), secs(res.Wall),
			harness.Thousands(int64(res.rowsPerSec() + 0.5)), speedup}
		rows[i] = append(row, res.CPU.cells(cpus)...)
	}
	return rows
}

func perOwner(counts []int) string {
	if len(counts) == 0 {
		return "—"
	}
	parts := make([]string, len(counts))
	for i, n := range counts {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, " + ")
}

func pgExec(ctx context.Context, url string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("postgres: %s: %w", strings.Fields(s)[0], err)
		}
	}
	return nil
}

// shardPipeline is the run's config as a JSON object: every value is literal, so the
// members resolve nothing.
func shardPipeline(base string, c shardCase) map[string]any {
	source := map[string]any{"connection_url": base, "query": "SELECT * FROM " + shardSchema + ".src"}
	cfg := map[string]any{"version": 1, "name": fmt.Sprintf("bench-shards-%dx%d", c.Shards, c.Members)}
	if c.Shards > 1 {
		cfg["shard"] = map[string]any{"count": c.Shards}
		source["shard"] = map[string]any{"key": "id"}
	}
	cfg["pipeline"] = map[string]any{
		"source": map[string]any{"type": "postgres", "config": source},
		"sink": map[string]any{"type": "postgres", "config": map[string]any{"connection_url": base,
			"table_name": shardSchema + ".dst", "write_mode": "upsert", "key": []string{"id"}}},
	}
	return cfg
}

// fastestShardCase measures c shardSamples times and keeps the fastest run.
func fastestShardCase(ctx context.Context, env *harness.Env, base string, c shardCase) (shardResult, error) {
	var best shardResult
	for i := range shardSamples {
		res, err := measureShardCase(ctx, env, base, c)
		if err != nil {
			return shardResult{}, err
		}
		env.Progress("shards: run %d of %d: %s, CPU busy/members/PostgreSQL/other %s", i+1, shardSamples,
			res.Wall.Round(time.Millisecond), strings.Join(res.CPU.cells(runtime.NumCPU()), " "))
		if i == 0 || res.Wall < best.Wall {
			best = res
		}
	}
	return best, nil
}

func measureShardCase(ctx context.Context, env *harness.Env, base string, c shardCase) (shardResult, error) {
	if err := pgExec(ctx, base, "DROP TABLE IF EXISTS "+shardSchema+".dst",
		"CREATE TABLE "+shardSchema+".dst (LIKE "+shardSchema+".src INCLUDING ALL)"); err != nil {
		return shardResult{}, err
	}
	cl, err := newBenchCluster(ctx, env.Sluice, env.Dir, base)
	if err != nil {
		return shardResult{}, err
	}
	defer cl.stop()
	members := make([]*benchMember, c.Members)
	errs := make([]error, c.Members)
	var wg sync.WaitGroup
	for i := range members {
		wg.Go(func() {
			members[i], errs[i] = cl.start(ctx, fmt.Sprintf("member-%d", i), "--max-concurrent-runs", strconv.Itoa(shardSlots))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return shardResult{}, err
	}
	pids := make([]int, len(members))
	for i, m := range members {
		pids[i] = m.cmd.Process.Pid
	}
	db, err := cl.db(ctx)
	if err != nil {
		return shardResult{}, err
	}
	defer db.close()

	before := takeCPU(pids)
	id, err := members[0].submit(ctx, map[string]any{"config": shardPipeline(base, c)})
	if err != nil {
		return shardResult{}, err
	}
	r, err := waitTerminal(ctx, db, id)
	if err != nil {
		return shardResult{}, err
	}
	res := shardResult{CPU: cpuBetween(before, takeCPU(pids))}
	if r.Status != "completed" {
		var msg *string
		_ = db.conn.QueryRow(ctx, `SELECT error_message FROM sluice_runs WHERE id = $1`, id).Scan(&msg)
		return shardResult{}, fmt.Errorf("the run ended %s: %s", r.Status, deref(msg))
	}
	res.Wall = time.Duration(*r.FinishedAt-r.CreatedAt) * time.Millisecond
	if res.PerOwner, err = shardsPerMember(ctx, members, c); err != nil {
		return shardResult{}, err
	}
	var want int64
	if err := db.conn.QueryRow(ctx, "SELECT (SELECT count(*) FROM "+shardSchema+".dst), (SELECT count(*) FROM "+shardSchema+".src)").
		Scan(&res.Rows, &want); err != nil {
		return shardResult{}, fmt.Errorf("count the sink: %w", err)
	}
	if res.Rows != want || want != env.Rows {
		return shardResult{}, fmt.Errorf("verify output: the sink holds %d rows, the source %d, want %d", res.Rows, want, env.Rows)
	}
	return res, nil
}

func deref(s *string) string {
	if s == nil {
		return "(no error message)"
	}
	return *s
}

// waitTerminal polls the run's row until it ended; the timing comes from its columns, so
// the polling interval adds nothing to the measure (and little load to the machine).
func waitTerminal(ctx context.Context, db *historyDB, id string) (runTimes, error) {
	deadline := time.Now().Add(shardRunTimeout)
	for {
		r, err := db.run(ctx, id)
		if err != nil {
			return r, err
		}
		switch r.Status {
		case "completed", "failed", "cancelled":
			return r, nil
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("run %s is still %s after %s", id, r.Status, shardRunTimeout)
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(shardPollEvery):
		}
	}
}

// shardsPerMember reads how many shards each member claimed from its /metrics, largest
// first (a shard's owner is cleared when it ends, so the history cannot tell); an
// unsharded run is one execution.
func shardsPerMember(ctx context.Context, members []*benchMember, c shardCase) ([]int, error) {
	if c.Shards <= 1 {
		return []int{1}, nil
	}
	var counts []int
	for _, m := range members {
		text, err := m.metrics(ctx)
		if err != nil {
			return nil, err
		}
		n, err := metricValue(text, "sluice_serve_shards_claimed_total")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		if n > 0 {
			counts = append(counts, int(n))
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	return counts, nil
}

// metricValue is the value of an unlabelled series (a counter, a histogram's _sum or
// _count) in Prometheus text.
func metricValue(text, name string) (float64, error) {
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == name {
			return strconv.ParseFloat(f[1], 64)
		}
	}
	return 0, fmt.Errorf("no %s in /metrics", name)
}
