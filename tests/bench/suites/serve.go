package suites

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

// Sizes of the serve suite. Like the cluster suite's, they are fixed rather than taken
// from --rows: the suite measures runs and latencies, not rows.
const (
	serveRuns       = 2_000
	serveClients    = 8 // concurrent HTTP clients submitting, each with a kept-alive connection
	serveSlotsAlt   = 8 // the --max-concurrent-runs tried besides the number of CPUs
	serveToken      = "bench-serve-token"
	serveRunTimeout = 2 * time.Minute // from the first submission to the last terminal run
	serveStartup    = time.Minute
	servePollEvery  = 100 * time.Millisecond
	// servePageLimit is the API's largest page.
	servePageLimit  = 500
	sinkSampleEvery = 100 // every 100th SQLite sink file has its row counted
	idleRuns        = 20  // runs submitted one at a time on the idle server, after the burst
	// Targets of issue 3, printed next to the numbers (never asserted).
	targetRunsPerSec = 500 // on PostgreSQL
	targetPickupP50  = 20 * time.Millisecond
)

// Serve measures one `sluice serve` process (no --cluster) taking serveRuns trivial runs
// over HTTP: runs per second from the first submission to the last finish, how soon a
// submitted run is claimed, how long a submission takes, and the server's peak RSS.
func Serve() harness.Suite {
	return harness.Suite{
		Name: "serve",
		Description: "sluice serve, one process: runs/s, pickup and submit latency of 2,000 trivial runs on a " +
			"SQLite and a PostgreSQL history (the PostgreSQL rows need a PostgreSQL URL)",
		Table: measureServe,
	}
}

// serveCase is one row: a history kind, a sink kind and --max-concurrent-runs.
type serveCase struct {
	History string // "sqlite" or "postgres"
	Sink    string // "stdout" or "sqlite"
	Slots   int
}

// serveCases lists the rows: every history × sink at the number of CPUs, and the stdout
// sink again at serveSlotsAlt slots where that differs.
func serveCases(cpus int, withPostgres bool) []serveCase {
	histories := []string{"sqlite"}
	if withPostgres {
		histories = append(histories, "postgres")
	}
	var out []serveCase
	for _, h := range histories {
		for _, sink := range []string{"stdout", "sqlite"} {
			out = append(out, serveCase{History: h, Sink: sink, Slots: cpus})
			if cpus != serveSlotsAlt {
				out = append(out, serveCase{History: h, Sink: sink, Slots: serveSlotsAlt})
			}
		}
	}
	return out
}

func (c serveCase) historyLabel() string {
	if c.History == "postgres" {
		return "PostgreSQL"
	}
	return "SQLite"
}

func (c serveCase) sinkLabel() string {
	if c.Sink == "sqlite" {
		return "generate 1 row → SQLite file"
	}
	return "generate 1 row → stdout"
}

func (c serveCase) id() string { return fmt.Sprintf("%s-%s-%d", c.History, c.Sink, c.Slots) }

// EnvBenchServeCases narrows the serve suite to the listed case ids (comma separated,
// e.g. "postgres-stdout-8"), for measuring one change without the whole table.
const EnvBenchServeCases = "SLUICE_BENCH_SERVE_CASES"

// filterServeCases keeps the cases whose id is in the comma list; an empty list keeps all.
func filterServeCases(cases []serveCase, list string) []serveCase {
	if strings.TrimSpace(list) == "" {
		return cases
	}
	want := strings.Split(list, ",")
	return slices.DeleteFunc(cases, func(c serveCase) bool {
		return !slices.ContainsFunc(want, func(w string) bool { return strings.TrimSpace(w) == c.id() })
	})
}

// serveResult is what one case measured.
type serveResult struct {
	Total, Completed, Failed int
	FirstFailure             string
	// Refused counts submissions answered other than 202; they never became runs.
	Refused      int
	FirstRefusal string
	Wall         time.Duration // first submission → last finished_at
	Submit       []time.Duration
	Pickup       []time.Duration // of the burst: mostly time queued behind earlier runs
	Idle         []time.Duration // of runs submitted one at a time: the claim loop's wake-up
	PeakRSSKiB   int64
}

func (r serveResult) runsPerSec() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Completed+r.Failed) / r.Wall.Seconds()
}

func measureServe(ctx context.Context, env *harness.Env) (harness.Table, error) {
	pgBase, pgErr := lookupURL(EnvBenchPostgres, envTestPostgres)
	cases := filterServeCases(serveCases(runtime.NumCPU(), pgErr == nil), os.Getenv(EnvBenchServeCases))
	var rows [][]string
	for _, c := range cases {
		env.Progress("serve %s: %s runs with %d clients", c.id(), harness.Thousands(serveRuns), serveClients)
		res, err := measureServeCase(ctx, env, c, pgBase)
		if ctx.Err() != nil {
			return harness.Table{}, ctx.Err()
		}
		if err != nil {
			env.Progress("serve %s: %v", c.id(), err)
		} else {
			env.Progress("serve %s: %.0f runs/s, pickup p50 %s", c.id(), res.runsPerSec(), serveMS(servePercentile(res.Pickup, 50)))
		}
		rows = append(rows, serveRow(c, res, err))
	}
	if pgErr != nil {
		rows = append(rows, []string{"PostgreSQL", "—", "—", "not measured: " + pgErr.Error(), "", "", "", "", "", ""})
	}
	env.Note("Each row is a fresh `sluice serve` process (no --cluster) on a fresh history (SQLite file, or a new PostgreSQL schema via search_path), --listen 127.0.0.1:<free port>, --auth-token, --log-level warn; runs' stdout rows go to /dev/null; the SQLite sink writes one new file per run.")
	env.Note("%s runs are submitted by %d concurrent keep-alive HTTP clients (POST /v1/runs, JSON {config}); then GET /v1/runs?status=queued,pending,running,sharded is polled every %s until empty, and every run is read back through the paginated list.",
		harness.Thousands(serveRuns), serveClients, servePollEvery)
	env.Note("runs/s = runs / (last finished_at − the client clock at the first submission); pickup = claimed_at − created_at of each run of the burst (history clock, ms), so it is mostly time queued behind earlier runs; submit = the HTTP round trip of POST /v1/runs; peak RSS = ru_maxrss of the server after SIGTERM.")
	env.Note("Idle pickup: after the burst, %d more runs are submitted one at a time, each once the previous one ended (GET /v1/runs/{id} every 2 ms): claimed_at − created_at with nothing queued, i.e. the claim loop's wake-up.", idleRuns)
	env.Note("All runs of a row share one pipeline name, so they share its pipeline key (the per-name advisory lock on PostgreSQL).")
	env.Note("Targets (issue 3): ≥ %d runs/s on PostgreSQL, pickup p50 < %s. Rows marked FAILED had runs end other than completed.", targetRunsPerSec, targetPickupP50)
	return harness.Table{
		Columns: []string{"history", "sink", "slots", "runs/s", "submit p50 / p99", "pickup p50 / p99",
			"idle pickup p50 / p99", "completed", "peak RSS", "vs target"},
		Rows: rows,
	}, nil
}

// serveRow formats one case's table row.
func serveRow(c serveCase, r serveResult, err error) []string {
	row := []string{c.historyLabel(), c.sinkLabel(), strconv.Itoa(c.Slots)}
	if err != nil {
		msg := err.Error()
		if len(msg) > 160 {
			msg = msg[:160] + "…"
		}
		return append(row, "FAILED: "+msg, "", "", "", "", "", "")
	}
	completed := fmt.Sprintf("%s of %s", harness.Thousands(int64(r.Completed)), harness.Thousands(serveRuns))
	switch {
	case r.Refused > 0:
		completed = fmt.Sprintf("FAILED: %s submissions refused (first: %s)", harness.Thousands(int64(r.Refused)), r.FirstRefusal)
	case r.Failed > 0 || r.Completed != serveRuns:
		completed = fmt.Sprintf("FAILED: %s not completed (first: %s)", harness.Thousands(int64(serveRuns-r.Completed)), r.FirstFailure)
	}
	rss := "—"
	if r.PeakRSSKiB > 0 {
		rss = fmt.Sprintf("%.1f MiB", float64(r.PeakRSSKiB)/1024)
	}
	return append(row,
		fmt.Sprintf("%s (%.2f s)", harness.Thousands(int64(math.Round(r.runsPerSec()))), r.Wall.Seconds()),
		serveMS(servePercentile(r.Submit, 50))+" / "+serveMS(servePercentile(r.Submit, 99)),
		serveMS(servePercentile(r.Pickup, 50))+" / "+serveMS(servePercentile(r.Pickup, 99)),
		serveMS(servePercentile(r.Idle, 50))+" / "+serveMS(servePercentile(r.Idle, 99)),
		completed, rss, serveVerdict(c, r))
}

// serveVerdict compares a row with the targets: runs/s counts on PostgreSQL only.
func serveVerdict(c serveCase, r serveResult) string {
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	out := "pickup " + mark(servePercentile(r.Pickup, 50) < targetPickupP50) +
		" (idle " + mark(servePercentile(r.Idle, 50) < targetPickupP50) + ")"
	if c.History == "postgres" {
		out = "runs/s " + mark(r.runsPerSec() >= targetRunsPerSec) + ", " + out
	}
	return out
}

// measureServeCase starts a server on a fresh history, submits serveRuns runs, waits for
// all of them to end, reads them back and stops the server.
func measureServeCase(ctx context.Context, env *harness.Env, c serveCase, pgBase string) (res serveResult, err error) {
	dir := env.Path("serve-" + c.id())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	if !env.Keep {
		defer os.RemoveAll(dir)
	}
	history := "sqlite:" + filepath.Join(dir, "history.db")
	if c.History == "postgres" {
		u, drop, err := serveSchema(ctx, pgBase)
		if err != nil {
			return res, err
		}
		defer drop()
		history = u
	}
	srv, err := startServeProc(ctx, env.Sluice, dir, history, c.Slots)
	if err != nil {
		return res, err
	}
	defer func() {
		rss, stopErr := srv.stop()
		res.PeakRSSKiB = rss
		if err == nil && stopErr != nil {
			err = stopErr
		}
	}()

	bodies := func(i int) ([]byte, error) { return serveBody(c.Sink, dir, i) }
	first := time.Now()
	sub, err := submitAll(ctx, srv, serveRuns, serveClients, bodies)
	if err != nil {
		return res, err
	}
	if err := srv.waitIdle(ctx, first.Add(serveRunTimeout)); err != nil {
		return res, err
	}
	runs, err := srv.listAll(ctx)
	if err != nil {
		return res, err
	}
	res = summarize(runs, first)
	res.Submit, res.Refused, res.FirstRefusal = sub.took, sub.refused, sub.firstRefusal
	if res.Total != serveRuns-sub.refused {
		return res, fmt.Errorf("the history lists %d runs, %d were accepted", res.Total, serveRuns-sub.refused)
	}
	if c.Sink == "sqlite" {
		if err := checkSinkFiles(ctx, dir, res.Completed); err != nil {
			return res, err
		}
	}
	if res.Idle, err = idlePickups(ctx, srv, idleRuns, func(i int) ([]byte, error) { return bodies(serveRuns + i) }); err != nil {
		return res, err
	}
	return res, nil
}

// serveBody is the JSON body submitting run i: generate 1 row into stdout, or into a
// SQLite file of its own under dir (one file per run, so runs never wait on each
// other's write lock).
func serveBody(sink, dir string, i int) ([]byte, error) {
	p := harness.Pipeline{Name: "bench-serve-" + sink,
		Source: harness.Connector{Type: "generate", Config: map[string]any{"count": 1, "seed": 1}},
		Sink:   harness.Connector{Type: "stdout", Config: map[string]any{}}}
	if sink == "sqlite" {
		p.Sink = harness.Connector{Type: "sqlite", Config: map[string]any{
			"connection_url": "sqlite:" + sinkFile(dir, i), "table_name": "rows",
			"write_mode": "append", "create_table": true,
		}}
	}
	text, err := p.YAML()
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]string{"config": string(text)})
}

// sinkFile is run i's SQLite file, in the serve's default --allow-path directory
// (<data-dir>/files, which serve creates at start).
func sinkFile(dir string, i int) string {
	return filepath.Join(dir, "files", fmt.Sprintf("out-%d.db", i))
}

// checkSinkFiles proves the SQLite runs wrote: one file per completed run, and every
// sinkSampleEvery-th holds its row.
func checkSinkFiles(ctx context.Context, dir string, completed int) error {
	files, err := filepath.Glob(filepath.Join(dir, "files", "out-*.db"))
	if err != nil {
		return err
	}
	if len(files) != completed {
		return fmt.Errorf("%d SQLite sink files for %d completed runs", len(files), completed)
	}
	for i := 0; i < len(files); i += sinkSampleEvery {
		n, err := harness.CountSQLiteRows(ctx, files[i], "rows")
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%s holds %d rows, want 1", files[i], n)
		}
	}
	return nil
}

// serveSchema creates a schema of its own on the PostgreSQL server and returns the
// history URL using it (search_path) and a function dropping it again.
func serveSchema(ctx context.Context, base string) (string, func(), error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	schema := "bench_" + hex.EncodeToString(b[:])
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("the PostgreSQL URL does not parse: %w", err)
	}
	exec := func(ctx context.Context, stmt string) error {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("postgres: %s: %w", stmt, err)
		}
		return nil
	}
	if err := exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop := func() {
		// Its own context: the drop must happen even when the run was interrupted.
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = exec(dctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	}
	return u.String(), drop, nil
}

// summarize counts the runs by outcome and derives the wall time (first submission to
// the last finish) and each run's pickup latency.
func summarize(runs []serveRun, first time.Time) serveResult {
	r := serveResult{Total: len(runs)}
	var last time.Time
	for _, run := range runs {
		switch run.Status {
		case "completed":
			r.Completed++
		default:
			r.Failed++
			if r.FirstFailure == "" {
				r.FirstFailure = run.Status
				if run.Error != nil {
					r.FirstFailure += ": " + serveTrim(run.Error.Code+" "+run.Error.Message)
				}
			}
		}
		if run.CreatedAt != nil && run.ClaimedAt != nil {
			r.Pickup = append(r.Pickup, run.ClaimedAt.Sub(*run.CreatedAt))
		}
		if run.FinishedAt != nil && run.FinishedAt.After(last) {
			last = *run.FinishedAt
		}
	}
	if !last.IsZero() {
		r.Wall = last.Sub(first)
	}
	return r
}

// servePercentile is the nearest-rank percentile p of ds (0 for none).
func servePercentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// serveMS prints a latency in ms, with a decimal below 10 ms where it still means
// something.
func serveMS(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

func serveTrim(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
