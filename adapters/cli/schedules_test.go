package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// scheduleService records what the CLI asked and answers canned schedules.
type scheduleService struct {
	*scheduling.Service // Preview is unused here
	mu                  sync.Mutex
	calls               []string
	created             []scheduling.CreateRequest
	backfills           []scheduling.BackfillRequest
}

func (s *scheduleService) note(call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
}

func cliSchedule(id string) *scheduling.View {
	return &scheduling.View{ID: id, TemplateID: "orders", Cron: "30 2 * * *", Timezone: "Europe/Berlin", MaxCatchupRuns: 1,
		Overlap: "skip", Params: map[string]string{}, Labels: map[string]string{}, CreatedAt: runsT0,
		NextTick: time.Date(2026, 5, 7, 0, 30, 0, 0, time.UTC)}
}

func (s *scheduleService) Create(_ context.Context, _ runs.Principal, r scheduling.CreateRequest) (*scheduling.View, error) {
	s.mu.Lock()
	s.created = append(s.created, r)
	s.mu.Unlock()
	if r.Cron == "bad" {
		return nil, &runs.InvalidRequestError{Field: "cron", Message: `"bad" is not a cron expression`}
	}
	return cliSchedule("s-1"), nil
}

func (s *scheduleService) Get(_ context.Context, _ runs.Principal, id string) (*scheduling.View, error) {
	return cliSchedule(id), nil
}

func (s *scheduleService) List(context.Context, runs.Principal) ([]*scheduling.View, error) {
	return []*scheduling.View{cliSchedule("s-1"), cliSchedule("s-2")}, nil
}

func (s *scheduleService) Pause(_ context.Context, _ runs.Principal, id string) (*scheduling.View, error) {
	s.note("pause " + id)
	v := cliSchedule(id)
	v.Paused = true
	return v, nil
}

func (s *scheduleService) Resume(_ context.Context, _ runs.Principal, id string) (*scheduling.View, error) {
	s.note("resume " + id)
	return cliSchedule(id), nil
}

func (s *scheduleService) Delete(_ context.Context, _ runs.Principal, id string) error {
	s.note("delete " + id)
	if id == "nope" {
		return fmt.Errorf("schedule nope: %w", run.ErrNotFound)
	}
	return nil
}

func (s *scheduleService) Ticks(_ context.Context, _ runs.Principal, id string, before time.Time, limit int) ([]scheduling.Tick, error) {
	s.note(fmt.Sprintf("ticks %s %s %d", id, before.Format(time.RFC3339), limit))
	at := time.Date(2026, 5, 6, 0, 30, 0, 0, time.UTC)
	return []scheduling.Tick{
		{Instant: at, Status: schedule.OutcomeCreated, RunID: "r-9", CreatedAt: at},
		{Instant: at.Add(-24 * time.Hour), Status: schedule.OutcomeSkipped, Reason: schedule.ReasonMissed,
			SummaryCount: 1200, SummaryFirst: at.Add(-2000 * time.Hour), CreatedAt: at},
	}, nil
}

func (s *scheduleService) Backfill(_ context.Context, _ runs.Principal, r scheduling.BackfillRequest) (*scheduling.Backfill, error) {
	s.mu.Lock()
	s.backfills = append(s.backfills, r)
	s.mu.Unlock()
	return &scheduling.Backfill{ID: "bf-1", Runs: []scheduling.BackfillRun{{RunID: "r-1", Start: r.From, End: r.To}}}, nil
}

func scheduleCLI(t *testing.T) (*scheduleService, func(args ...string) (int, string, string)) {
	t.Helper()
	svc := &scheduleService{}
	srv := httptest.NewServer(sluicehttp.New(sluicehttp.Config{Auth: sluicehttp.AuthConfig{Token: runsToken}},
		sluicehttp.Deps{Runs: newRunsService(), Schedules: svc, Backfills: svc}))
	t.Cleanup(srv.Close)
	dataDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dataDir, cli.TokenFile), []byte(runsToken+"\n"), 0o600))
	return svc, func(args ...string) (int, string, string) {
		root := cli.NewRoot(cli.Info{Version: "test"})
		deps := cli.RunsDeps{HTTP: srv.Client()}
		root.AddCommand(cli.NewScheduleCommand(cli.ScheduleDeps{Runs: deps}), cli.NewBackfillCommand(deps))
		vars := map[string]string{"SLUICE_SERVER": srv.URL, "SLUICE_DATA_DIR": dataDir}
		var stdout, stderr bytes.Buffer
		code := cli.Execute(context.Background(), root, args, cli.Env{
			Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
			Stdin:  strings.NewReader("version: 1\nname: piped\n"), Stdout: &stdout, Stderr: &stderr,
		})
		return code, stdout.String(), stderr.String()
	}
}

func TestScheduleCommands(t *testing.T) {
	t.Parallel()
	svc, exec := scheduleCLI(t)
	code, out, errOut := exec("schedule", "create", "orders", "--cron", "30 2 * * *", "--timezone", "Europe/Berlin",
		"--catchup", "--max-catchup-runs", "3", "--overlap", "queue", "--param", "day=yesterday", "--label", "team=data")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "s-1")
	require.Contains(t, out, "2026-05-07T00:30:00Z")
	got := svc.created[0]
	require.Equal(t, "orders", got.TemplateID)
	require.Equal(t, 3, *got.MaxCatchupRuns)
	require.Equal(t, map[string]string{"day": "yesterday"}, got.Params)
	require.Equal(t, map[string]string{"team": "data"}, got.Labels)
	require.True(t, got.Catchup)

	code, _, errOut = exec("schedule", "create", "orders", "--cron", "bad")
	require.Equal(t, 2, code, "a refused request exits 2")
	require.Contains(t, errOut, "cron")
	code, _, errOut = exec("schedule", "create", "orders", "--cron", "@daily", "--param", "novalue")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--param")

	code, out, _ = exec("schedule", "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "s-2")
	code, out, _ = exec("schedule", "pause", "s-1", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"paused":true`)
	code, _, _ = exec("schedule", "resume", "s-1")
	require.Equal(t, 0, code)
	code, out, _ = exec("schedule", "delete", "s-1")
	require.Equal(t, 0, code)
	require.Contains(t, out, "deleted schedule s-1")
	code, _, errOut = exec("schedule", "delete", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "not_found")
	code, out, _ = exec("schedule", "ticks", "s-1", "--limit", "2", "--before", "2026-05-07T00:00:00Z")
	require.Equal(t, 0, code)
	require.Contains(t, out, "r-9")
	require.Contains(t, out, "1200 ticks from")
	require.Contains(t, out, "--before 2026-05-05T00:30:00Z", "a full page names the next")
	require.Equal(t, []string{"pause s-1", "resume s-1", "delete s-1", "delete nope",
		"ticks s-1 2026-05-07T00:00:00Z 2"}, svc.calls)
}

func TestBackfillCommand(t *testing.T) {
	t.Parallel()
	svc, exec := scheduleCLI(t)
	code, out, errOut := exec("backfill", "orders", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-02T00:00:00Z",
		"--window", "P1D", "--param", "token=abc", "--max-active", "2", "--timezone", "UTC")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "backfill bf-1: 1 runs")
	got := svc.backfills[0]
	require.Equal(t, "orders", got.Template)
	require.Equal(t, "P1D", got.Window)
	require.Equal(t, 2, *got.MaxActive)
	require.Equal(t, map[string]string{"token": "abc"}, got.Params)

	code, _, errOut = exec("backfill", "--config", "-", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-02T00:00:00Z", "--window", "P1D")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "version: 1\nname: piped\n", string(svc.backfills[1].Config))

	code, _, errOut = exec("backfill", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-02T00:00:00Z", "--window", "P1D")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "TEMPLATE")
	code, _, errOut = exec("backfill", "orders", "--config", "-", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-02T00:00:00Z", "--window", "P1D")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "not both")
	code, _, errOut = exec("backfill", "orders", "--from", "yesterday", "--to", "2026-03-02T00:00:00Z", "--window", "P1D")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "from")
	require.Len(t, svc.backfills, 2, "refused requests reach no service")
}

// A flag the server cannot do without is refused before any request, naming the flag and
// the subcommand's help, not with "cannot reach the server" or a round trip.
func TestRequiredFlagsAreRefusedLocally(t *testing.T) {
	t.Parallel()
	svc, exec := scheduleCLI(t)
	for _, tc := range []struct {
		args    []string
		missing string
		help    string
	}{
		{[]string{"schedule", "create", "orders", "--param", "day=2026-12-01"}, `"cron"`, "sluice schedule create --help"},
		{[]string{"backfill", "orders", "--to", "2026-03-02T00:00:00Z", "--window", "P1D"}, `"from"`, "sluice backfill --help"},
		{[]string{"backfill", "orders", "--from", "2026-03-01T00:00:00Z", "--window", "P1D"}, `"to"`, "sluice backfill --help"},
		{[]string{"backfill", "orders", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-02T00:00:00Z"}, `"window"`, "sluice backfill --help"},
	} {
		code, _, errOut := exec(tc.args...)
		require.Equal(t, cli.ExitUsage, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.missing, tc.args)
		require.Contains(t, errOut, "Run '"+tc.help+"' for usage.", tc.args)
	}
	require.Empty(t, svc.created, "no schedule request was sent")
	require.Empty(t, svc.backfills, "no backfill request was sent")
}

// GET /v1/schedules/{id} has its command, printing the REST object in -o json.
func TestScheduleGet(t *testing.T) {
	t.Parallel()
	_, exec := scheduleCLI(t)
	code, out, errOut := exec("schedule", "get", "s-7", "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"id":"s-7"`)
	require.Contains(t, out, `"next_tick":"2026-05-07T00:30:00Z"`)
	code, out, errOut = exec("schedule", "get", "s-7", "-o", "name")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "s-7\n", out)
	code, out, errOut = exec("schedule", "get", "s-7")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^s-7\s+orders\s+30 2 \* \* \*\s+Europe/Berlin`, out)
}
