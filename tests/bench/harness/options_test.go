package harness_test

import (
	"bytes"
	"errors"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParseRows(t *testing.T) {
	t.Parallel()
	good := map[string]int64{"1": 1, "1000000": 1_000_000, "1,000,000": 1_000_000, "10_000_000": 10_000_000, " 42 ": 42}
	for in, want := range good {
		got, err := harness.ParseRows(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "abc", "0", "-3", "1.5", "1e6", "99999999999999999999"} {
		_, err := harness.ParseRows(in)
		require.Error(t, err, in)
	}
}

func TestParseOnly(t *testing.T) {
	t.Parallel()
	ids, err := harness.ParseOnly("")
	require.NoError(t, err)
	require.Nil(t, ids)
	ids, err = harness.ParseOnly(" csv-jsonl , baseline ")
	require.NoError(t, err)
	require.Equal(t, []string{"csv-jsonl", "baseline"}, ids)
	_, err = harness.ParseOnly("a,,b")
	require.ErrorContains(t, err, "--only")
}

func TestParseArgs(t *testing.T) {
	t.Parallel()
	reg := registry(t)
	tests := []struct {
		name    string
		args    []string
		vars    map[string]string
		rows    int64
		fromEnv bool
		command string
	}{
		{"default", nil, nil, harness.DefaultRows, false, "go run ./tests/bench/cmd/sluice-bench"},
		{"env", nil, map[string]string{harness.EnvRows: "5000"}, 5000, true,
			"SLUICE_BENCH_ROWS=5000 go run ./tests/bench/cmd/sluice-bench"},
		{"flag beats env", []string{"--rows", "1,000"}, map[string]string{harness.EnvRows: "5000"}, 1000, false,
			"go run ./tests/bench/cmd/sluice-bench --rows 1,000"},
		{"quoted", []string{"--rows=7", "--only", "a b"}, nil, 7, false,
			"go run ./tests/bench/cmd/sluice-bench --rows=7 --only 'a b'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, err := harness.ParseArgs(tt.args, env(tt.vars), reg, &bytes.Buffer{})
			require.NoError(t, err)
			require.Equal(t, tt.rows, o.Rows)
			require.Equal(t, tt.fromEnv, o.RowsFromEnv)
			require.Equal(t, tt.command, o.CommandLine())
			require.Equal(t, "demo", o.Suite)
		})
	}
}

func TestParseArgsFlags(t *testing.T) {
	t.Parallel()
	o, err := harness.ParseArgs([]string{"--suite", "demo", "--only", "fast,base", "--keep", "--markdown", "--repeat", "3", "--bin", "tmp/sluice"},
		env(nil), registry(t), &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, []string{"fast", "base"}, o.Only)
	require.True(t, o.Keep)
	require.True(t, o.Markdown)
	require.Equal(t, 3, o.Repeat)
	require.Equal(t, "tmp/sluice", o.Bin)
}

func TestParseArgsRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{"bad rows", []string{"--rows", "many"}, nil, "--rows"},
		{"zero rows", []string{"--rows", "0"}, nil, "--rows"},
		{"bad env rows", nil, map[string]string{harness.EnvRows: "x"}, harness.EnvRows},
		{"unknown suite", []string{"--suite", "nope"}, nil, "--suite"},
		{"repeat zero", []string{"--repeat", "0"}, nil, "--repeat"},
		{"empty only id", []string{"--only", "a,"}, nil, "--only"},
		{"positional", []string{"extra"}, nil, "unexpected argument"},
		{"unknown flag", []string{"--fast"}, nil, "-fast"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := harness.ParseArgs(tt.args, env(tt.vars), registry(t), &bytes.Buffer{})
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestParseArgsHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_, err := harness.ParseArgs([]string{"--help"}, env(nil), registry(t), &out)
	require.True(t, errors.Is(err, flag.ErrHelp))
	for _, want := range []string{"--rows", "--suite", "--only", "--repeat", "--markdown", "--keep", "--bin",
		harness.EnvRows, "--rows 10000000", "demo", "fast", "base"} {
		require.Contains(t, out.String(), want)
	}
}
