package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestValidateOK(t *testing.T) {
	t.Parallel()
	h := newHarness()
	code, stdout, _ := h.exec(t, "validate", configFile(t))
	require.Equal(t, 0, code)
	require.Equal(t, "ok\n", stdout)
	require.False(t, h.runner.probed)
}

func TestValidateReportsEveryError(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.loader.cfg, h.loader.err = nil, pipeline.Errors{
		{Path: "pipeline.sink.config.key", Pos: pipeline.Pos{Line: 9, Column: 5}, Message: "required for upsert"},
		{Path: "name", Message: "must match [a-z0-9]…"},
	}
	file := configFile(t)
	code, stdout, stderr := h.exec(t, "validate", file)
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.Equal(t, "error: "+file+": pipeline.sink.config.key: required for upsert (line 9, column 5)\n"+
		"error: "+file+": name: must match [a-z0-9]…\n", stderr)

	code, stdout, _ = h.exec(t, "validate", file, "--json")
	require.Equal(t, 2, code)
	require.JSONEq(t, `{"valid":false,"warnings":[],"errors":[
		{"path":"pipeline.sink.config.key","message":"required for upsert","line":9,"column":5},
		{"path":"name","message":"must match [a-z0-9]…"}]}`, stdout)
}

func TestValidateJSONValidWithWarnings(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.loader.cfg.ShardCount = 4
	code, stdout, _ := h.exec(t, "validate", configFile(t), "--json")
	require.Equal(t, 0, code)
	var res struct {
		Valid    bool
		Errors   []any
		Warnings []string
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	require.True(t, res.Valid)
	require.Empty(t, res.Errors)
	require.Equal(t, pipeline.RunWarnings(h.loader.cfg, nil), res.Warnings)
	require.NotContains(t, stdout, "connect", "no connect block without --connect")
}

func TestValidateSyntaxErrorJSON(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.loader.cfg, h.loader.err = nil, &pipeline.SyntaxError{Pos: pipeline.Pos{Line: 2, Column: 3}, Message: "bad indent"}
	code, stdout, _ := h.exec(t, "validate", configFile(t), "--json")
	require.Equal(t, 2, code)
	require.JSONEq(t, `{"valid":false,"warnings":[],"errors":[{"path":"","message":"bad indent","line":2,"column":3}]}`, stdout)
}

func TestValidateConnect(t *testing.T) {
	t.Parallel()
	h := newHarness()
	code, stdout, _ := h.exec(t, "validate", configFile(t), "--connect")
	require.Equal(t, 0, code)
	require.True(t, h.runner.probed)
	require.Equal(t, "ok (source and sink connected)\n", stdout)

	h.redact.Register("pw123")
	h.runner.probeErr = errBoomWith("dial postgres://u:pw123@db: refused")
	code, _, stderr := h.exec(t, "validate", configFile(t), "--connect")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "error: connect: dial postgres://")
	require.NotContains(t, stderr, "pw123")

	code, stdout, _ = h.exec(t, "validate", configFile(t), "--connect", "--json")
	require.Equal(t, 1, code)
	require.Contains(t, stdout, `"valid":true`)
	require.Contains(t, stdout, `"connect":{"ok":false,"error":"dial postgres://`)
}

type stringError string

func (e stringError) Error() string { return string(e) }

func errBoomWith(s string) error { return stringError(s) }

func TestVersion(t *testing.T) {
	t.Parallel()
	code, stdout, _ := newHarness().exec(t, "version")
	require.Equal(t, 0, code)
	require.Equal(t, "sluice v1.2.3 (abc123) go1.26 linux/amd64\n", stdout)
	code, stdout, _ = newHarness().exec(t, "version", "--json")
	require.Equal(t, 0, code)
	require.JSONEq(t, `{"version":"v1.2.3","commit":"abc123","modified":false,"go":"go1.26","platform":"linux/amd64"}`, stdout)
}

func TestHelpListsCommandsAndEnv(t *testing.T) {
	t.Parallel()
	code, stdout, _ := newHarness().exec(t, "--help")
	require.Equal(t, 0, code)
	for _, c := range []string{"run", "validate", "version"} {
		require.Contains(t, stdout, "  "+c+" ")
	}
	code, stdout, _ = newHarness().exec(t, "run", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, `--data-dir string`)
	require.Contains(t, stdout, `[$SLUICE_DATA_DIR] (default ".sluice")`)
	require.Contains(t, stdout, "[$SLUICE_PARAM]")
}

func TestUnknownCommandExits2(t *testing.T) {
	t.Parallel()
	code, _, stderr := newHarness().exec(t, "frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `unknown command "frobnicate"`)
}

func TestEnvName(t *testing.T) {
	t.Parallel()
	require.Equal(t, "SLUICE_LEASE_TTL_SECS", cli.EnvName("lease-ttl-secs"))
	require.Equal(t, "SLUICE_DATA_DIR", cli.EnvName("data-dir"))
}

func TestBindEnv(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	n := fs.Int("max-runs", 4, "")
	set := fs.String("name", "def", "")
	pools := fs.StringSlice("pool", nil, "")
	arr := fs.StringArray("label", nil, "")
	ok := fs.Bool("ok", false, "")
	require.NoError(t, fs.SetAnnotation("pool", cli.AnnotationEnvAlias, []string{"SLUICE_SERVE_POOLS"}))
	require.NoError(t, fs.Parse([]string{"--name", "cli"}))
	env := map[string]string{
		"SLUICE_MAX_RUNS": "9", "SLUICE_NAME": "env", "SLUICE_SERVE_POOLS": "gpu, private",
		"SLUICE_LABEL": "a=1,b=2", "SLUICE_OK": "",
	}
	all := func(*pflag.Flag) bool { return true }
	require.NoError(t, cli.BindEnv(fs, func(k string) (string, bool) { v, o := env[k]; return v, o }, all))
	require.Equal(t, 9, *n)
	require.Equal(t, "cli", *set, "the command line wins")
	require.Equal(t, []string{"gpu", "private"}, *pools, "the alias is read and split on commas")
	require.Equal(t, []string{"a=1", "b=2"}, *arr)
	require.False(t, *ok, "an empty variable is unset")
	require.True(t, fs.Changed("max-runs"))

	env = map[string]string{"SLUICE_MAX_RUNS": "many", "SLUICE_OK": "maybe"}
	fs2 := pflag.NewFlagSet("y", pflag.ContinueOnError)
	fs2.Int("max-runs", 4, "")
	fs2.Bool("ok", false, "")
	err := cli.BindEnv(fs2, func(k string) (string, bool) { v, o := env[k]; return v, o }, all)
	require.ErrorContains(t, err, "--max-runs (from SLUICE_MAX_RUNS)")
	require.ErrorContains(t, err, "--ok (from SLUICE_OK)")
	require.Len(t, strings.Split(err.Error(), "\n"), 2, "every bad value is reported")
}

// A command's own PreRun hooks see values from the environment, and still run.
func TestEnvBoundBeforePreRun(t *testing.T) {
	t.Parallel()
	var seen []string
	for _, withE := range []bool{false, true} {
		var name string
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
		cmd.Flags().StringVar(&name, "pool-name", "default", "")
		hook := func(*cobra.Command, []string) { seen = append(seen, name) }
		if withE {
			cmd.PreRunE = func(c *cobra.Command, a []string) error { hook(c, a); return nil }
		} else {
			cmd.PreRun = hook
		}
		root := cli.NewRoot(cli.Info{})
		root.AddCommand(cli.EnvAll(cmd))
		var out bytes.Buffer
		code := cli.Execute(context.Background(), root, []string{"x"}, cli.Env{
			Lookup: func(k string) (string, bool) { return "gpu", k == "SLUICE_POOL_NAME" },
			Stdout: &out, Stderr: &out,
		})
		require.Equal(t, 0, code, out.String())
	}
	require.Equal(t, []string{"gpu", "gpu"}, seen)
}
