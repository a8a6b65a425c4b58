package runs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
)

const sqlConfig = `version: 1
name: orders
pipeline:
  source:
    type: sql
    config:
      query: "SELECT * FROM orders WHERE pw = ${param.pw} AND region = ${param.region} AND at >= ${backfill.start} -- $${x}"
  sink:
    type: out
    config:
      path: "orders_${param.region}.csv"
params:
  region: { type: string, default: eu }
  pw: { type: string, secret: true, required: true }
`

// TestStoredRunKeepsSQLParamsBound: the stored config of a run keeps the directives of its
// SQL query and carries their values (a secret one as a sealed token) as param defaults,
// so the claimer binds exactly what the submitter did, and no value is ever query text.
func TestStoredRunKeepsSQLParamsBound(t *testing.T) {
	t.Parallel()
	cat := newCatalog()
	cat["sql"] = pipeline.Spec{Type: "sql", Roles: pipeline.RoleSource, Fields: []pipeline.FieldSpec{
		{Name: "query", Type: pipeline.FieldString, Required: true, SQL: pipeline.DialectPostgres},
	}}
	loader := &execute.Loader{Decoder: configtext.Decoder{}, Env: env{}, Catalog: cat}
	h := newHarness(t, withDeps(func(d *runs.Deps) {
		d.Sealer = fakeSealer{id: "k1"}
		d.Loader = loader
	}))
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	r := req(operator, sqlConfig)
	r.Params = map[string]string{"pw": thePassword, "region": "us"}
	r.Backfill = &execute.Window{Start: start, End: start.Add(24 * time.Hour)}
	res := h.submit(t, r)
	rec, err := h.store.Get(context.Background(), res.RunID)
	require.NoError(t, err)

	text, err := runs.OpenRun(context.Background(), fakeSealer{id: "k1"}, &redactor{}, rec.ID, rec.Config, true, h.store.secrets(rec.ID))
	require.NoError(t, err)
	require.Contains(t, text, `"SELECT * FROM orders WHERE pw = ${param.pw} AND region = ${param.region} AND at >= ${param.sluice.backfill.start} -- $${x}"`)
	require.Contains(t, text, `"path": "orders_us.csv"`, "outside SQL text the value is written as before")

	cfg, err := loader.Load(context.Background(), []byte(text), execute.LoadOptions{Logical: start})
	require.NoError(t, err)
	require.Equal(t, pipeline.Statement{
		Text: []string{"SELECT * FROM orders WHERE pw = ", " AND region = ", " AND at >= ", " -- ${x}"},
		Args: []any{thePassword, "us", start},
	}, cfg.Source.Config["query"])
}
