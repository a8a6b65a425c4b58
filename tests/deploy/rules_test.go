package deploy_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/adapters/metrics"
)

var promDir = filepath.Join(root, "deploy", "prometheus")

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert  string `yaml:"alert"`
			Record string `yaml:"record"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(raw, into), path)
}

// TestEveryAlertHasPromtoolTests requires, for every alert, a promtool case where it
// fires and one where it stays quiet, and runs `promtool test rules` when promtool is
// installed (CI installs it: .ci/run).
func TestEveryAlertHasPromtoolTests(t *testing.T) {
	t.Parallel()
	var rules ruleFile
	readYAML(t, filepath.Join(promDir, "alerts.yml"), &rules)
	var tests ruleTests
	readYAML(t, filepath.Join(promDir, "alerts_test.yml"), &tests)
	require.Equal(t, []string{"alerts.yml"}, tests.RuleFiles)

	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				alerts = append(alerts, r.Alert)
				require.Truef(t, fires[r.Alert], "alert %s has no promtool case where it fires", r.Alert)
				require.Truef(t, quiet[r.Alert], "alert %s has no promtool case where it stays quiet", r.Alert)
			}
		}
	}
	// SPEC §14.6: members below expected, a poisoned run, history unreachable, a starved
	// pool, a pipeline without a recent success.
	require.ElementsMatch(t, []string{"SluiceMembersBelowExpected", "SluiceRunPoisoned", "SluiceHistoryUnreachable",
		"SluicePoolStarved", "SluicePipelineNoRecentSuccess"}, alerts)
	for name := range fires {
		require.Contains(t, alerts, name, "alerts_test.yml tests an alert alerts.yml does not define")
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		require.Empty(t, os.Getenv("CI"), "promtool is missing; .ci/run installs the Debian prometheus package")
		t.Log("promtool is not installed: the rules were not run")
		return
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = promDir
		out, err := cmd.CombinedOutput()
		require.NoErrorf(t, err, "promtool %v:\n%s", args, out)
	}
}

// exportedFamilies are the metric names a server exports: the families of a fresh
// Metrics with every labelled family touched, plus the _bucket/_sum/_count series of
// its histograms.
func exportedFamilies(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New(metrics.Options{MaxPipelines: 1, Pools: []string{"default"}})
	m.PipelineConnectors("p", "generate", "file")
	m.RunClaimed("default", 0)
	m.Observe("GET", "/v1/runs", 200, 0)
	m.ScheduleTick("created")
	m.ShardReclaimed("requeued")
	m.SetPendingSource(nil)
	names := map[string]bool{}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			f := strings.Fields(name)
			names[f[0]] = true
			if f[1] == "histogram" {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					names[f[0]+s] = true
				}
			}
		}
	}
	names["sluice_serve_runs_pending"] = true // read from the history at scrape time
	return names
}

var metricName = regexp.MustCompile(`\bsluice_[a-z_]+\b`)

// TestAlertsAndDashboardNameExportedMetrics keeps the alert rules and the dashboard in
// step with the server: a renamed metric must not leave an alert that never fires or a
// panel that stays empty.
func TestAlertsAndDashboardNameExportedMetrics(t *testing.T) {
	t.Parallel()
	known := exportedFamilies(t)
	var exprs []string
	var rules ruleFile
	readYAML(t, filepath.Join(promDir, "alerts.yml"), &rules)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "grafana", "dashboards", "sluice.json"))
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	// SPEC §14.6 / issue: the panels the dashboard must have.
	var titles []string
	for _, p := range dash.Panels {
		titles = append(titles, strings.ToLower(p.Title))
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, want := range []string{"runs finished per second by status", "pending runs per pool", "claim latency",
		"run duration", "rows per second per pipeline", "live members", "history reachable", "runs per claim"} {
		require.Truef(t, slices.ContainsFunc(titles, func(s string) bool { return strings.HasPrefix(s, want) }),
			"the dashboard has no %q panel", want)
	}
	used := 0
	for _, e := range exprs {
		for _, name := range metricName.FindAllString(e, -1) {
			used++
			require.Truef(t, known[name], "%s is not a metric the server exports (in %q)", name, e)
		}
	}
	require.Positive(t, used)
}
