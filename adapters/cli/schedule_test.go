package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
)

func execSchedule(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	root := cli.NewRoot(cli.Info{Version: "v0"})
	root.AddCommand(cli.NewScheduleCommand(cli.ScheduleDeps{
		Now: func() time.Time { return time.Date(2026, 11, 1, 4, 30, 0, 0, time.UTC) },
	}))
	var stdout, stderr bytes.Buffer
	code := cli.Execute(context.Background(), root, append([]string{"schedule", "next"}, args...), cli.Env{
		Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Stdin:  &bytes.Buffer{}, Stdout: &stdout, Stderr: &stderr,
	})
	return code, stdout.String(), stderr.String()
}

func TestScheduleNextTable(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := execSchedule(t, nil, "30 2 * * *", "--timezone", "America/New_York",
		"--from", "2026-03-07T12:00:00Z", "--count", "2")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	require.Equal(t, ""+
		"UTC                   LOCAL (America/New_York)   ZONE\n"+
		"2026-03-08T07:00:00Z  2026-03-08T03:00:00-04:00  EDT\n"+
		"2026-03-09T06:30:00Z  2026-03-09T02:30:00-04:00  EDT\n", stdout)
}

func TestScheduleNextJSONAndDefaults(t *testing.T) {
	t.Parallel()
	// No --from: now (04:30Z); hourly through the New York fall-back hour.
	code, stdout, stderr := execSchedule(t, nil, "0 * * * *", "--timezone", "America/New_York", "--count", "3", "--json")
	require.Equal(t, 0, code, stderr)
	require.JSONEq(t, `{"cron":"0 * * * *","timezone":"America/New_York","from":"2026-11-01T04:30:00Z","instants":[
		{"utc":"2026-11-01T05:00:00Z","local":"2026-11-01T01:00:00-04:00","zone":"EDT"},
		{"utc":"2026-11-01T06:00:00Z","local":"2026-11-01T01:00:00-05:00","zone":"EST"},
		{"utc":"2026-11-01T07:00:00Z","local":"2026-11-01T02:00:00-05:00","zone":"EST"}]}`, stdout)

	// Default zone UTC, default count 5, a macro.
	code, stdout, _ = execSchedule(t, nil, "@daily", "--json")
	require.Equal(t, 0, code)
	var p cli.Preview
	require.NoError(t, json.Unmarshal([]byte(stdout), &p))
	require.Equal(t, "UTC", p.Timezone)
	require.Equal(t, "@daily", p.Cron)
	require.Len(t, p.Instants, 5)
	require.Equal(t, "2026-11-02T00:00:00Z", p.Instants[0].UTC)
}

// The zone mirrors serve's --timezone and reads SLUICE_TIMEZONE; --count and --from are
// this call's own, so SLUICE_COUNT and SLUICE_FROM exported for something else are ignored.
func TestScheduleNextReadsEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SLUICE_TIMEZONE": "Asia/Kolkata", "SLUICE_COUNT": "1", "SLUICE_FROM": "2020-01-01T00:00:00Z"}
	code, stdout, stderr := execSchedule(t, env, "0 9 * * *", "--json", "--count", "1", "--from", "2026-06-01T00:00:00Z")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, `"instants":[{"utc":"2026-06-01T03:30:00Z","local":"2026-06-01T09:00:00+05:30","zone":"IST"}]`)

	code, stdout, stderr = execSchedule(t, env, "0 9 * * *", "--json")
	require.Equal(t, 0, code, stderr)
	var p struct {
		From     string `json:"from"`
		Instants []any  `json:"instants"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &p))
	require.Len(t, p.Instants, 5, "SLUICE_COUNT is not read")
	require.NotEqual(t, "2020-01-01T00:00:00Z", p.From, "SLUICE_FROM is not read")
}

func TestScheduleNextRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		msg  string
	}{
		{"bad field", nil, []string{"0 25 * * *"}, `invalid CRON argument: cron "0 25 * * *": hour field: "25" is out of range 0-23`},
		{"seconds field", nil, []string{"0 0 2 * * *"}, "there is no seconds field"},
		{"unquoted expression", nil, []string{"0", "2", "*", "*", "*"}, "as one quoted argument"},
		{"no expression", nil, nil, "as one quoted argument"},
		{"unknown zone", nil, []string{"@daily", "--timezone", "Mars/Base"}, `invalid value for --timezone: unknown time zone "Mars/Base"`},
		{"host zone", nil, []string{"@daily", "--timezone", "Local"}, "invalid value for --timezone: "},
		{"unknown zone from env", map[string]string{"SLUICE_TIMEZONE": "Nowhere"}, []string{"@daily"}, `invalid value for --timezone: unknown time zone "Nowhere"`},
		{"bad from", nil, []string{"@daily", "--from", "2026-03-07"}, `invalid value for --from: "2026-03-07" is not an RFC 3339 time`},
		{"zero count", nil, []string{"@daily", "--count", "0"}, "invalid value for --count: 0 is outside 1..1000"},
		{"huge count", nil, []string{"@daily", "--count", "1001"}, "invalid value for --count: 1001 is outside 1..1000"},
		{"count not a number", nil, []string{"@daily", "--count", "many"}, `invalid argument "many" for "--count"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := execSchedule(t, c.env, c.args...)
			require.Equal(t, 2, code)
			require.Empty(t, stdout)
			require.Contains(t, stderr, c.msg)
		})
	}
}
