package bootstrap

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/adapters/console"
	apihttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
)

// registerUI is --ui (SPEC §14.8).
func registerUI(fs *pflag.FlagSet, v *bool) {
	fs.BoolVar(v, "ui", true, "serve the web console at /ui/ (GET / redirects there); --ui=false answers 404 there")
}

// withConsole puts the console in front of the API: /ui/… goes to it and GET / redirects
// to it; everything else is the API's. A nil ui leaves the API alone (its 404s).
func withConsole(api, ui http.Handler) http.Handler {
	if ui == nil {
		return api
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			http.Redirect(w, r, console.Prefix, http.StatusFound)
		case r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, console.Prefix):
			if r.URL.Path == "/ui" {
				http.Redirect(w, r, console.Prefix, http.StatusFound)
				return
			}
			ui.ServeHTTP(w, r) // ui carries the request id (apihttp.RequestID)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// newConsole builds the console over the same use-cases as the API.
func newConsole(s *serveSettings, log *slog.Logger, svc *runs.Service, tpl *templates.Service,
	sch *scheduling.Service, ap *approvals.Service, st *store.Store, tr execute.Tracer, mt console.RequestMetrics,
) (http.Handler, error) {
	if !s.UI {
		return nil, nil
	}
	key, err := sessionKey(s.Auth)
	if err != nil {
		return nil, err
	}
	// A log on screen follows at most a second behind, whatever --cluster-poll-secs says.
	ui, err := console.New(console.Config{SessionKey: key, PollInterval: min(s.Poll, time.Second),
		NoAuth: s.Auth.Disabled, QueryTimeout: s.Timeouts.Query}, console.Deps{
		Tokens:    apihttp.NewTokenChecker(s.Auth.config()),
		Signouts:  st,
		Runs:      svc,
		Templates: tpl,
		Schedules: sch,
		Approvals: ap,
		Cluster:   consoleCluster{st: st, s: s},
		Explain:   explain,
		Redact:    apihttp.Redact,
		Log:       log,
		Tracer:    tr,
		// The API's collectors: console requests count beside the API's, by route pattern.
		RequestMetrics: mt,
	})
	if err != nil {
		return nil, err
	}
	return apihttp.RequestID(ui), nil
}

// sessionKey signs console sessions. It is derived from every principal the server
// accepts (name, role, tenant and token), so members with the same principals accept each
// other's sessions, and changing any of them — a token rotated, a role lowered — ends
// every session at the next start (a cookie carries its role until it expires). Without
// auth it is random per process.
func sessionKey(a authChoice) ([]byte, error) {
	var entries []string
	entry := func(name string, role runs.Role, tenant, token string) {
		d := sha256.Sum256([]byte(token))
		entries = append(entries, strings.Join([]string{name, string(role), tenant, string(d[:])}, "\x00"))
	}
	if a.Token != "" {
		entry(apihttp.TokenPrincipalName, runs.Admin, "", a.Token)
	}
	for _, p := range a.Principals {
		entry(p.Name, p.Role, p.Tenant, p.Token)
	}
	if a.Disabled || len(entries) == 0 {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("--ui: session key: %w", err)
		}
		return key, nil
	}
	slices.Sort(entries)
	m := hmac.New(sha256.New, []byte("sluice console session key v1"))
	for _, e := range entries {
		m.Write([]byte(e))
		m.Write([]byte{0xff})
	}
	return m.Sum(nil), nil
}

// explain answers a use-case error as the REST API does.
func explain(err error) (int, string, string, bool) {
	code, msg, _, known := apihttp.Classify(err)
	status, ok := apihttp.Codes()[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return status, code, msg, known
}

// consoleCluster reads the cluster page from the history: members, pending runs per pool
// and the newest scheduler term.
type consoleCluster struct {
	st *store.Store
	s  *serveSettings
}

func (c consoleCluster) Status(ctx context.Context) (console.ClusterStatus, error) {
	out := console.ClusterStatus{Clustered: c.s.Cluster}
	ms, err := c.st.Members(ctx)
	if err != nil {
		return out, err
	}
	for _, m := range ms {
		stopped := !m.StoppedAt.IsZero()
		out.Members = append(out.Members, console.Member{InstanceID: m.InstanceID, Host: m.Host, Listen: m.Listen,
			Version: m.Version, Pools: m.Pools, InFlight: m.InFlight, MaxConcurrent: m.MaxConcurrent,
			Draining: m.Draining, Stopped: stopped, Live: !stopped && m.Age < c.s.LeaseTTL,
			HeartbeatAt: m.HeartbeatAt, HeartbeatAge: m.Age})
	}
	if out.Pending, err = c.st.PendingByPool(ctx); err != nil {
		return out, err
	}
	leaders, err := c.st.Leaders(ctx)
	if err != nil {
		return out, err
	}
	if len(leaders) > 0 {
		l := leaders[0]
		out.Leader = &console.Leader{InstanceID: l.InstanceID, Host: l.Host, Term: l.Epoch, StartedAt: l.StartedAt,
			HeartbeatAt: l.HeartbeatAt, Stopped: !l.StoppedAt.IsZero()}
	}
	return out, nil
}
