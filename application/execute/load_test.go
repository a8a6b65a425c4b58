package execute_test

import (
	"context"
	"errors"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// loadEnv is an in-memory Environment that counts what it is asked.
type loadEnv struct {
	vars  map[string]string
	files map[string]string
	mu    sync.Mutex
	reads int
}

func (e *loadEnv) LookupEnv(name string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads++
	v, ok := e.vars[name]
	return v, ok
}

func (e *loadEnv) ReadFile(path string) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads++
	v, ok := e.files[path]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return []byte(v), nil
}

// linkEnv adds symlink resolution to loadEnv.
type linkEnv struct {
	*loadEnv
	links map[string]string
}

func (e linkEnv) EvalSymlinks(path string) (string, error) {
	if real, ok := e.links[path]; ok {
		return real, nil
	}
	if _, ok := e.files[path]; ok {
		return path, nil
	}
	return path, nil
}

type loadRedactor struct {
	mu     sync.Mutex
	values []string
}

func (r *loadRedactor) Register(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.values = append(r.values, values...)
}

func (r *loadRedactor) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.values...)
	sort.Strings(out)
	return out
}

type loadCatalog map[string]pipeline.Spec

func (c loadCatalog) Spec(typ string) (pipeline.Spec, bool) {
	s, ok := c[typ]
	return s, ok
}

func (c loadCatalog) Types(role pipeline.Role) []string {
	var out []string
	for name, s := range c {
		if s.Roles&role != 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func newLoadCatalog() loadCatalog {
	pg := pipeline.Spec{
		Type: "pg", Roles: pipeline.RoleBoth, ExactlyOnce: true,
		Fields: append(append([]pipeline.FieldSpec{
			{Name: "connection_url", Type: pipeline.FieldString, Required: true, Secret: true},
			{Name: "table_name", Type: pipeline.FieldString, Role: pipeline.RoleSink, Required: true},
			{Name: "ratio", Type: pipeline.FieldNumber, Role: pipeline.RoleSource},
			{Name: "strict", Type: pipeline.FieldBool, Role: pipeline.RoleSource},
			{Name: "note", Type: pipeline.FieldString, Role: pipeline.RoleSource},
		}, pipeline.SourceQueryFields()...), pipeline.SinkWriteFields()...),
		Check: func(role pipeline.Role, cfg map[string]any, path string) pipeline.Errors {
			if role == pipeline.RoleSink {
				return pipeline.CheckWriteMode(cfg, path)
			}
			return nil
		},
	}
	stdout := pipeline.Spec{Type: "stdout", Roles: pipeline.RoleSink}
	return loadCatalog{"pg": pg, "stdout": stdout}
}

func newLoader(env execute.Environment, red *loadRedactor) *execute.Loader {
	l := &execute.Loader{Decoder: configtext.Decoder{}, Env: env, Catalog: newLoadCatalog()}
	if red != nil {
		l.Redactor = red
	}
	return l
}

var logical = time.Date(2026, 3, 1, 2, 30, 0, 0, time.UTC)

const fullConfig = `version: 1
name: orders-${param.region}
pipeline:
  source:
    type: pg
    config:
      connection_url: "${env:PG_URL}"
      query: "SELECT * FROM t WHERE d = '${now.date}' AND at < '${now.datetime}' AND u < ${now.unix} AND p = '$${literal}' AND w >= '${backfill.start}' AND w < '${backfill.end}'"
      batch_size: ${param.batch}
      ratio: ${param.ratio}
      strict: ${param.strict}
      note: "${param.note}"
  sink:
    type: pg
    config:
      connection_url: "postgres://app:${secret:WH_PASS}@wh/db"
      table_name: "${file:table.txt}"
      write_mode: upsert
      key: ["${param.key}"]
params:
  region: { type: string, default: eu }
  batch: { type: int, required: true }
  ratio: { type: float, default: 0.5 }
  strict: { type: bool, default: false }
  note: { type: string, default: "cost $${x}" }
  key: { type: string, secret: true, required: true }
`

func TestLoadResolvesEveryDirective(t *testing.T) {
	t.Parallel()
	env := &loadEnv{
		vars:  map[string]string{"PG_URL": "postgres://u:pw@src/db", "WH_PASS": "hunter22"},
		files: map[string]string{"/etc/sluice/table.txt": "  orders_copy\n"},
	}
	red := &loadRedactor{}
	opts := execute.LoadOptions{
		BaseDir: "/etc/sluice",
		Params:  map[string]string{"batch": "500", "region": "${env:PG_URL}", "key": "order_id"},
		Logical: logical,
		Backfill: &execute.Window{
			Start: time.Date(2026, 2, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600)),
			End:   time.Date(2026, 2, 2, 0, 0, 0, 0, time.FixedZone("CET", 3600)),
		},
	}
	_, err := newLoader(env, red).Load(context.Background(), []byte(fullConfig), opts)
	// region is used in the name, and a param value is never resolved again: the name is
	// the literal text, which is not a valid name.
	require.ErrorContains(t, err, `name: name "orders-${env:PG_URL}" is not a valid name`)

	opts.Params["region"] = "us"
	cfg, err := newLoader(env, red).Load(context.Background(), []byte(fullConfig), opts)
	require.NoError(t, err)
	require.Equal(t, "orders-us", cfg.Name)
	require.Equal(t, map[string]any{
		"connection_url": "postgres://u:pw@src/db",
		"query": "SELECT * FROM t WHERE d = '2026-03-01' AND at < '2026-03-01T02:30:00Z' AND u < 1772332200 AND p = '${literal}'" +
			" AND w >= '2026-02-01T00:00:00+01:00' AND w < '2026-02-02T00:00:00+01:00'",
		"batch_size": int64(500), // a whole-scalar param keeps its type
		"ratio":      0.5,
		"strict":     false,
		"note":       "cost ${x}",
	}, cfg.Source.Config)
	require.Equal(t, "postgres://app:hunter22@wh/db", cfg.Sink.String("connection_url"))
	require.Equal(t, "orders_copy", cfg.Sink.String("table_name"))
	require.Equal(t, []string{"order_id"}, cfg.Sink.Strings("key"))
	require.Len(t, cfg.Params, 6)

	// Every value read through env, secret and file, and secret param values, is
	// registered; dates and plain params are not.
	got := red.list()
	require.Subset(t, got, []string{"postgres://u:pw@src/db", "hunter22", "orders_copy", "order_id"})
	for _, v := range got {
		require.NotContains(t, v, "2026")
		require.NotEqual(t, "us", v)
	}
}

func TestLoadNowDateUsesZone(t *testing.T) {
	t.Parallel()
	text := "version: 1\nname: x\npipeline:\n  source: {type: pg, config: {connection_url: u, query: \"${now.date}|${now.datetime}|${now.unix}\"}}\n  sink: {type: stdout}\n"
	opts := execute.LoadOptions{Logical: logical, Zone: time.FixedZone("NY", -5*3600)}
	cfg, err := newLoader(&loadEnv{}, nil).Load(context.Background(), []byte(text), opts)
	require.NoError(t, err)
	require.Equal(t, "2026-02-28|2026-03-01T02:30:00Z|1772332200", cfg.Source.String("query"))

	// A run's stored run_date (taken in its schedule's zone) wins over this member's zone.
	opts.RunDate = "2026-03-01"
	cfg, err = newLoader(&loadEnv{}, nil).Load(context.Background(), []byte(text), opts)
	require.NoError(t, err)
	require.Equal(t, "2026-03-01|2026-03-01T02:30:00Z|1772332200", cfg.Source.String("query"))
}

const brokenConfig = `version: 1
name: x
pipeline:
  source:
    type: pg
    config:
      connection_url: "${env:PG_URL}"
      query: "${file:missing.sql}"
      batch_size: "${env:BATCH}"
      note: "${param.nope} ${backfill.start} ${param.opt}"
      ratio: "${now.time}"
  sink: {type: pg, config: {connection_url: "${secret:WH}", table_name: t, colour: red}}
params:
  opt: { type: string }
`

func TestLoadReportsEveryUnresolvableDirective(t *testing.T) {
	t.Parallel()
	env := &loadEnv{vars: map[string]string{}, files: map[string]string{}}
	_, err := newLoader(env, &loadRedactor{}).Load(context.Background(), []byte(brokenConfig),
		execute.LoadOptions{BaseDir: "/cfg", Logical: logical})
	require.True(t, errors.Is(err, pipeline.ErrInvalidConfig))
	require.False(t, errors.Is(err, execute.ErrDirectiveRefused))
	var es pipeline.Errors
	require.True(t, errors.As(err, &es))
	var lines []string
	for _, e := range es {
		lines = append(lines, e.String())
	}
	require.ElementsMatch(t, []string{
		"pipeline.source.config.connection_url: ${env:PG_URL} is not set (line 7, column 23)",
		"pipeline.source.config.query: ${file:missing.sql} cannot be read: open /cfg/missing.sql: file does not exist (line 8, column 14)",
		"pipeline.source.config.batch_size: ${env:BATCH} is not set (line 9, column 19)",
		`pipeline.source.config.note: ${param.nope}: no param "nope" is declared in params (line 10, column 13)`,
		"pipeline.source.config.note: ${backfill.start} only resolves in a backfill run (line 10, column 13)",
		`pipeline.source.config.note: ${param.opt}: param "opt" has no value: supply it or give it a default (line 10, column 13)`,
		"pipeline.source.config.ratio: ${now.time}: nothing else under now: use ${now.date}, ${now.datetime} or ${now.unix} (line 11, column 14)",
		"pipeline.sink.config.connection_url: ${secret:WH} is not set (line 12, column 45)",
		"pipeline.sink.config.colour: unknown key for a pg sink (known keys: connection_url, table_name, write_mode, key, create_table) (line 12, column 76)",
	}, lines)
	require.Equal(t, es, execute.FieldErrors(err))
}

func TestLoadNetworkRefusals(t *testing.T) {
	t.Parallel()
	env := &loadEnv{
		vars:  map[string]string{"SLUICE_VAULT_KEY": "k3y", "APP_URL": "postgres://a/b"},
		files: map[string]string{"/srv/cfg/table.txt": "t1", "/srv/cfg/link": "stolen", "/etc/passwd": "root"},
	}
	red := &loadRedactor{}
	l := newLoader(linkEnv{loadEnv: env, links: map[string]string{"/srv/cfg/link": "/etc/shadow"}}, red)
	text := `version: 1
name: x
pipeline:
  source: {type: pg, config: {connection_url: "${env:SLUICE_VAULT_KEY}", query: "${secret:sluice_token}", note: "${file:/etc/passwd}"}}
  sink: {type: pg, config: {connection_url: "${env:APP_URL}", table_name: "${file:../../etc/passwd}", key: ["${file:link}"]}}
`
	opts := execute.LoadOptions{Network: true, AllowFileDirs: []string{"/srv/cfg"}, BaseDir: "/srv/cfg", Logical: logical}
	_, err := l.Load(context.Background(), []byte(text), opts)
	require.True(t, errors.Is(err, execute.ErrDirectiveRefused))
	var refused *execute.DirectiveRefusedError
	require.True(t, errors.As(err, &refused))
	require.Equal(t, "pipeline.source.config.connection_url", refused.Path)
	require.Equal(t, "${env:SLUICE_VAULT_KEY}", refused.Directive)
	require.Equal(t, pipeline.Pos{Line: 4, Column: 47}, refused.Pos)
	require.Contains(t, refused.Reason, "SLUICE_")

	got := map[string]string{}
	for _, e := range execute.FieldErrors(err) {
		got[e.Path] = e.Message
	}
	require.Equal(t, map[string]string{
		"pipeline.source.config.connection_url": "${env:SLUICE_VAULT_KEY} refused: SLUICE_* variables are the server's own settings and never resolve in a config sent over the network",
		"pipeline.source.config.query":          "${secret:sluice_token} refused: SLUICE_* variables are the server's own settings and never resolve in a config sent over the network",
		"pipeline.source.config.note":           "${file:/etc/passwd} refused: the path is outside the directories allowed by --allow-file-dir",
		"pipeline.sink.config.table_name":       "${file:../../etc/passwd} refused: the path is outside the directories allowed by --allow-file-dir",
		"pipeline.sink.config.key[0]":           "${file:link} refused: the file is a link to a place outside the directories allowed by --allow-file-dir",
	}, got)
	require.NotContains(t, err.Error(), "k3y")
	require.NotContains(t, red.list(), "k3y")
	require.NotContains(t, red.list(), "root")
	require.NotContains(t, red.list(), "stolen")

	// The same names resolve for a local config.
	opts.Network = false
	_, err = l.Load(context.Background(), []byte(text), opts)
	require.False(t, errors.Is(err, execute.ErrDirectiveRefused))

	// Allowed files resolve over the network.
	ok := `version: 1
name: x
pipeline:
  source: {type: pg, config: {connection_url: "${env:APP_URL}", query: "${file:/srv/cfg/table.txt}"}}
  sink: {type: stdout}
`
	cfg, err := l.Load(context.Background(), []byte(ok), execute.LoadOptions{Network: true, AllowFileDirs: []string{"/srv/cfg/"}})
	require.NoError(t, err)
	require.Equal(t, "t1", cfg.Source.String("query"))
}

func TestLoadNetworkFileRefusalsWithoutAllowedDirs(t *testing.T) {
	t.Parallel()
	env := &loadEnv{files: map[string]string{"/srv/cfg/q.sql": "SELECT 1"}}
	text := `version: 1
name: x
pipeline:
  source: {type: pg, config: {connection_url: u, query: "${file:/srv/cfg/q.sql}"}}
  sink: {type: stdout}
`
	_, err := newLoader(env, nil).Load(context.Background(), []byte(text), execute.LoadOptions{Network: true})
	var refused *execute.DirectiveRefusedError
	require.True(t, errors.As(err, &refused))
	require.Contains(t, refused.Reason, "--allow-file-dir DIR")

	relative := strings.Replace(text, "/srv/cfg/q.sql", "q.sql", 1)
	_, err = newLoader(env, nil).Load(context.Background(), []byte(relative), execute.LoadOptions{Network: true, AllowFileDirs: []string{"/srv/cfg"}})
	require.True(t, errors.As(err, &refused))
	require.Contains(t, refused.Reason, "absolute path")
	require.Zero(t, env.reads)
}

func TestLoadSyntaxOnly(t *testing.T) {
	t.Parallel()
	env := &loadEnv{}
	text := `version: 1
name: ${param.name}
pipeline:
  source: {type: pg, config: {connection_url: "${env:PG_URL}", query: "${file:q.sql}", batch_size: "${env:N}"}}
  sink: {type: pg, config: {connection_url: "${secret:WH}", table_name: "t_${now.date}", write_mode: "${env:MODE}"}}
params:
  name: { type: string }
`
	opts := execute.LoadOptions{SyntaxOnly: true, Params: map[string]string{"name": "nightly"}, Logical: logical}
	cfg, err := newLoader(env, nil).Load(context.Background(), []byte(text), opts)
	require.NoError(t, err)
	require.Zero(t, env.reads, "syntax-only loads read nothing")
	require.Equal(t, "nightly", cfg.Name)
	require.Equal(t, "${env:PG_URL}", cfg.Source.String("connection_url"))
	require.Equal(t, "t_2026-03-01", cfg.Sink.String("table_name"))

	// Syntax, params and refusals are still checked.
	bad := strings.Replace(text, "${file:q.sql}", "${file:q.sql} ${param.other} ${env:X", 1)
	_, err = newLoader(env, nil).Load(context.Background(), []byte(bad), opts)
	require.ErrorContains(t, err, "unterminated directive")
	bad = strings.Replace(text, "${file:q.sql}", "${file:q.sql} ${param.other}", 1)
	_, err = newLoader(env, nil).Load(context.Background(), []byte(bad), opts)
	require.ErrorContains(t, err, `pipeline.source.config.query: ${param.other}: no param "other" is declared in params`)
	opts.Network = true
	_, err = newLoader(env, nil).Load(context.Background(), []byte(text), opts)
	require.True(t, errors.Is(err, execute.ErrDirectiveRefused))
	require.Zero(t, env.reads)
}

// paramsConfig declares a required string param and an int with a default, used by the
// source's batch_size.
const paramsConfig = `version: 1
name: x
pipeline:
  source: {type: pg, config: {connection_url: u, query: "q", batch_size: "${param.n}"}}
  sink: {type: stdout}
params:
  region: { type: string, required: true }
  n: { type: int, default: 5 }
`

func TestLoadParams(t *testing.T) {
	t.Parallel()
	text := paramsConfig
	l := newLoader(&loadEnv{}, nil)
	_, err := l.Load(context.Background(), []byte(text), execute.LoadOptions{Params: map[string]string{"n": "abc", "zone": "x"}})
	require.Equal(t, pipeline.Errors{
		{Path: "params.zone", Message: "unknown param (declared: region, n)", Param: "zone"},
		{Path: "params.region", Message: "required", Param: "region"},
		{Path: "params.n", Message: `must be an int, not "abc"`, Param: "n"},
	}, execute.FieldErrors(err))

	cfg, err := l.Load(context.Background(), []byte(text), execute.LoadOptions{Params: map[string]string{"region": "eu"}})
	require.NoError(t, err)
	require.Equal(t, int64(5), cfg.Source.Int("batch_size", 0))

	// Params supplied to a config that declares none.
	_, err = l.Load(context.Background(), []byte(strings.Split(text, "params:")[0]), execute.LoadOptions{Params: map[string]string{"region": "eu"}})
	require.ErrorContains(t, err, "params.region: unknown param: the config declares no params")

	// The params block declares; a directive in it is refused.
	withDirective := strings.Replace(text, "default: 5", `default: "${env:N}"`, 1)
	_, err = l.Load(context.Background(), []byte(withDirective), execute.LoadOptions{Params: map[string]string{"region": "eu"}})
	require.ErrorContains(t, err, "params.n.default: ${env:N}: directives are not resolved in the params block")

	// A broken declaration is reported once, not again at each use.
	broken := strings.Replace(text, "type: int", "type: integer", 1)
	_, err = l.Load(context.Background(), []byte(broken), execute.LoadOptions{Params: map[string]string{"region": "eu"}})
	errs := execute.FieldErrors(err)
	require.Len(t, errs, 1, "%v", errs)
	require.Equal(t, "params.n.type", errs[0].Path)
}

func TestLoadSecretParamRegistered(t *testing.T) {
	t.Parallel()
	text := `version: 1
name: x
pipeline:
  source: {type: pg, config: {connection_url: "postgres://u:${param.pw}@h/d", query: "q"}}
  sink: {type: stdout}
params:
  pw: { type: string, secret: true, required: true }
  pin: { type: int, secret: true, default: 1234 }
`
	red := &loadRedactor{}
	cfg, err := newLoader(&loadEnv{}, red).Load(context.Background(), []byte(text), execute.LoadOptions{Params: map[string]string{"pw": "s3cr3t!"}})
	require.NoError(t, err)
	require.Equal(t, "postgres://u:s3cr3t!@h/d", cfg.Source.String("connection_url"))
	require.Equal(t, []string{"1234", "s3cr3t!"}, red.list())
}

func TestLoadValidationAndExactlyOnce(t *testing.T) {
	t.Parallel()
	text := `version: 1
name: x
delivery: exactly_once
pipeline:
  source: {type: pg, config: {connection_url: u, query: q}}
  sink: {type: stdout}
`
	_, err := newLoader(&loadEnv{}, nil).Load(context.Background(), []byte(text), execute.LoadOptions{})
	require.ErrorContains(t, err, `delivery: exactly_once needs a SQL sink that supports it`)
	require.ErrorContains(t, err, `sink type "stdout"`)
	require.ErrorContains(t, err, "(line 3, column 11)")

	withKey := strings.Replace(text, "{type: stdout}", "{type: stdout, config: {path: x}}", 1)
	_, err = newLoader(&loadEnv{}, nil).Load(context.Background(), []byte(withKey), execute.LoadOptions{})
	require.ErrorContains(t, err, "pipeline.sink.config.path: unknown key: a stdout sink takes no config keys")
}

func TestLoadSyntaxErrorPassesThrough(t *testing.T) {
	t.Parallel()
	_, err := newLoader(&loadEnv{}, nil).Load(context.Background(), []byte("version: 1\nname: [x\n"), execute.LoadOptions{})
	var se *pipeline.SyntaxError
	require.True(t, errors.As(err, &se))
	require.Equal(t, 2, se.Pos.Line)
	fe := execute.FieldErrors(err)
	require.Len(t, fe, 1)
	require.Equal(t, 2, fe[0].Pos.Line)
}

func TestLoadCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newLoader(&loadEnv{}, nil).Load(ctx, []byte("version: 1"), execute.LoadOptions{})
	require.ErrorIs(t, err, context.Canceled)
}

func TestResolveLeavesTheInputAlone(t *testing.T) {
	t.Parallel()
	l := newLoader(&loadEnv{vars: map[string]string{"A": "1"}}, nil)
	root, err := l.Parse([]byte("version: 1\nname: x\nv: \"${env:A}\"\nn: ${param.n}\nparams: {n: {type: int}}\n"))
	require.NoError(t, err)
	before := string(root.CanonicalJSON())
	out, decl, err := l.Resolve(root, execute.LoadOptions{Params: map[string]string{"n": "7"}})
	require.NoError(t, err)
	require.Equal(t, before, string(root.CanonicalJSON()))
	require.Equal(t, "1", out.Get("v").Value)
	require.Equal(t, pipeline.TypeInt, out.Get("n").Type)
	require.Equal(t, []pipeline.Param{{Name: "n", Type: pipeline.ParamInt}}, decl)

	out, _, err = l.Resolve(root, execute.LoadOptions{})
	require.ErrorContains(t, err, `n: ${param.n}: param "n" has no value`)
	require.True(t, out.Get("n").Deferred)
}
