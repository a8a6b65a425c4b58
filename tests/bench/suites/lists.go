package suites

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/tests/bench/harness"
)

// Shape of the history the lists suite loads: runs spread evenly over listDays, of
// listNames pipelines, listTenants tenants (plus untenanted runs) and listTeams label
// values; 90 % completed, 5 % failed, 3 % cancelled, 2 % pending.
const (
	listDays    = 30
	listNames   = 100
	listTenants = 10
	listTeams   = 20
	listPage    = 50 // the page size of every list, the API's default
	listQueries = 40 // lists per filter, each with other parameters
)

// Lists measures `GET /v1/runs`' store query on a large history, one row per filter.
func Lists() harness.Suite {
	return harness.Suite{
		Name: "lists",
		Description: "run lists on a history of --rows runs (30 days, 100 pipelines, 10 tenants, a label each) on SQLite " +
			"and PostgreSQL: p50 and p99 of the first page for each filter the API offers",
		Table: measureLists,
	}
}

// listFilter is one filter of the list, made anew for each query from its index.
type listFilter struct {
	name string
	make func(i int, now time.Time) runs.Filter
}

func listFilters() []listFilter {
	tenant := func(i int) string { return fmt.Sprintf("tenant-%d", i%listTenants+1) }
	name := func(i int) string { return fmt.Sprintf("pipeline-%d", i%listNames) }
	return []listFilter{
		{"newest (no filter)", func(int, time.Time) runs.Filter { return runs.Filter{} }},
		{"status failed", func(int, time.Time) runs.Filter { return runs.Filter{Status: []string{"failed"}} }},
		{"status pending (rare)", func(int, time.Time) runs.Filter { return runs.Filter{Status: []string{"pending"}} }},
		{"pipeline name", func(i int, _ time.Time) runs.Filter { return runs.Filter{Name: name(i)} }},
		{"tenant", func(i int, _ time.Time) runs.Filter { return runs.Filter{Tenant: tenant(i), TenantSet: true} }},
		{"tenant + status failed", func(i int, _ time.Time) runs.Filter {
			return runs.Filter{Tenant: tenant(i), TenantSet: true, Status: []string{"failed"}}
		}},
		{"tenant + pipeline name", func(i int, _ time.Time) runs.Filter {
			return runs.Filter{Tenant: tenant(i), TenantSet: true, Name: name(i * 7)}
		}},
		{"one-hour window, days back", func(i int, now time.Time) runs.Filter {
			since := now.Add(-time.Duration(i%listDays)*24*time.Hour - 12*time.Hour)
			return runs.Filter{Since: since, Until: since.Add(time.Hour)}
		}},
		{"label team=…", func(i int, _ time.Time) runs.Filter {
			return runs.Filter{Labels: map[string]string{"team": fmt.Sprintf("team-%d", i%listTeams)}}
		}},
		{"second page of status failed", func(int, time.Time) runs.Filter { return runs.Filter{Status: []string{"failed"}} }},
	}
}

func measureLists(ctx context.Context, env *harness.Env) (harness.Table, error) {
	pgBase, pgErr := lookupURL(EnvBenchPostgres, envTestPostgres)
	kinds := []string{"sqlite"}
	if pgErr == nil {
		kinds = append(kinds, "postgres")
	}
	filters := listFilters()
	rows := make([][]string, len(filters))
	for i, f := range filters {
		rows[i] = []string{f.name}
	}
	cols := []string{"filter"}
	for _, kind := range kinds {
		got, err := measureListsOn(ctx, env, kind, pgBase, filters)
		if err != nil {
			return harness.Table{}, fmt.Errorf("%s lists: %w", kind, err)
		}
		cols = append(cols, kind+" p50 / p99", kind+" runs on the page")
		for i := range rows {
			rows[i] = append(rows[i], got[i]...)
		}
	}
	if pgErr != nil {
		env.Note("PostgreSQL not measured: %v", pgErr)
	}
	env.Note("%d runs over %d days, %d pipelines, %d tenants and untenanted runs, one label each; loaded by SQL "+
		"outside the timing, then ANALYZE. Each filter is listed %d times with other parameters (a page of %d, "+
		"newest first, as GET /v1/runs answers); the second page starts after the first page's last run.",
		env.Rows, listDays, listNames, listTenants, listQueries, listPage)
	return harness.Table{Columns: cols, Rows: rows}, nil
}

// measureListsOn loads the history of kind and answers, per filter, its p50 / p99 and
// the smallest page seen.
func measureListsOn(ctx context.Context, env *harness.Env, kind, pgBase string, filters []listFilter) ([][]string, error) {
	url, drop := "sqlite:"+filepath.Join(env.Dir, "history-lists.db"), func() {}
	if kind == "postgres" {
		var err error
		if url, drop, err = serveSchema(ctx, pgBase); err != nil {
			return nil, err
		}
	}
	defer drop()
	st, err := store.Open(ctx, url, store.Options{})
	if err != nil {
		return nil, fmt.Errorf("open the history: %w", err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	now := time.Now()
	env.Progress("lists %s: loading %d runs", kind, env.Rows)
	if err := loadListed(ctx, st.DB(), env.Rows, now); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if _, err := st.DB().ExecContext(ctx, "ANALYZE"); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	out := make([][]string, len(filters))
	for fi, f := range filters {
		env.Progress("lists %s: %s", kind, f.name)
		took := make([]time.Duration, 0, listQueries)
		fewest := listPage
		for i := range listQueries {
			flt := f.make(i, now)
			flt.Limit = listPage
			if strings.HasPrefix(f.name, "second page") {
				first, err := st.List(ctx, flt)
				if err != nil {
					return nil, err
				}
				if len(first) > 0 {
					flt.After = first[len(first)-1].ID
				}
			}
			start := time.Now()
			page, err := st.List(ctx, flt)
			took = append(took, time.Since(start))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
			fewest = min(fewest, len(page))
		}
		slices.Sort(took)
		p50, p99 := took[len(took)/2], took[min(len(took)-1, len(took)*99/100)]
		out[fi] = []string{fmt.Sprintf("%s / %s", roundMS(p50), roundMS(p99)), fmt.Sprint(fewest)}
	}
	return out, nil
}

func roundMS(d time.Duration) string {
	if d < 10*time.Millisecond {
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// loadListed inserts n runs created over the last listDays up to now, ids UUIDv7 of
// their created_at as the store makes them, with one label each, in chunks.
func loadListed(ctx context.Context, db *bun.DB, n int64, now time.Time) error {
	const chunk = 1_000
	rng := rand.New(rand.NewPCG(1, 2))
	span := int64(listDays * 24 * time.Hour / time.Millisecond)
	first := now.UnixMilli() - span
	for from := int64(0); from < n; from += chunk {
		to := min(from+chunk, n)
		var runVals, labelVals []string
		var runArgs, labelArgs []any
		for i := from; i < to; i++ {
			created := first + span*i/max(n, 1)
			id := uuidV7At(created, rng)
			status, finished := "completed", any(created+60_000)
			switch m := i % 100; {
			case m >= 98:
				status, finished = "pending", nil
			case m >= 95:
				status = "cancelled"
			case m >= 90:
				status = "failed"
			}
			tenant := ""
			if k := i % (listTenants + 1); k > 0 {
				tenant = fmt.Sprintf("tenant-%d", k)
			}
			runVals = append(runVals, "(?, ?, ?, 'default', ?, 'api', '2026-01-01', ?, 3, 'x', ?, ?)")
			runArgs = append(runArgs, id, tenant, fmt.Sprintf("pipeline-%d", i%listNames), status, created, created, finished)
			labelVals = append(labelVals, "(?, 'team', ?)")
			labelArgs = append(labelArgs, id, fmt.Sprintf("team-%d", i%listTeams))
		}
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO sluice_runs (id, tenant, name, pool, status, trigger_kind,
  run_date, logical_at, max_attempts, config, created_at, finished_at) VALUES `+strings.Join(runVals, ", "), runArgs...); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO sluice_run_labels (run_id, key, value) VALUES `+
				strings.Join(labelVals, ", "), labelArgs...)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// uuidV7At is a version-7 UUID whose time is ms, the rest random (RFC 9562).
func uuidV7At(ms int64, rng *rand.Rand) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[8:], rng.Uint64())
	binary.BigEndian.PutUint16(b[6:], uint16(rng.Uint32()))
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	return uuid.UUID(b).String()
}
