package console

import (
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
)

//go:embed assets pages
var files embed.FS

// Prefix is where the console is mounted.
const Prefix = "/ui/"

// formLimit bounds a form body; the largest form is a template's params.
const formLimit = 256 << 10

// Config is what the console is configured with; zero values take the defaults.
type Config struct {
	// SessionKey signs session cookies and CSRF tokens; at least 32 bytes.
	SessionKey []byte
	// SessionTTL is how long a session lasts; zero: DefaultSessionTTL.
	SessionTTL time.Duration
	// PollInterval is how often a followed log stream reads the history; zero: 1 s.
	PollInterval time.Duration
	// Now is the clock of session expiry; nil: time.Now.
	Now func() time.Time
	// QueryTimeout bounds reading and recording a sign-out in the history, like every
	// history read serving a request (--query-timeout-secs); zero: 10 s.
	QueryTimeout time.Duration
	// NoAuth says the server runs with --no-auth: the sign-in page says any token signs
	// in (as the anonymous admin, as the API treats every caller).
	NoAuth bool
}

// Deps are the use-cases the pages call. Tokens, Signouts, Runs and Explain are
// required; a nil service hides its page.
type Deps struct {
	Tokens Tokens
	// Signouts keeps sign-outs where every member sees them (the history).
	Signouts  Signouts
	Runs      RunService
	Templates TemplateService
	Schedules ScheduleService
	Approvals ApprovalService
	Cluster   Cluster
	Explain   Explain
	// Redact masks URL credentials in text the pages show that did not come through
	// Explain (run error messages); nil shows it as stored.
	Redact func(string) string
	Log    *slog.Logger
	// Tracer opens a span per request (SPEC §14.6); nil records none.
	Tracer execute.Tracer
	// RequestMetrics counts requests by route pattern; nil counts none.
	RequestMetrics RequestMetrics
}

// console holds what every handler shares.
type console struct {
	cfg      Config
	deps     Deps
	log      *slog.Logger
	sessions *sessions
	pages    map[string]*template.Template
	static   http.Handler
}

// New builds the console handler for requests under Prefix.
func New(cfg Config, deps Deps) (http.Handler, error) {
	if deps.Tokens == nil || deps.Signouts == nil || deps.Runs == nil || deps.Explain == nil {
		return nil, errors.New("console.New: Deps.Tokens, Deps.Signouts, Deps.Runs and Deps.Explain are required")
	}
	if len(cfg.SessionKey) < 32 {
		return nil, errors.New("console.New: Config.SessionKey must be at least 32 bytes")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = 10 * time.Second
	}
	if deps.Tracer == nil {
		deps.Tracer = execute.NopTracer{}
	}
	if deps.Redact == nil {
		deps.Redact = func(s string) string { return s }
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	assets, err := fs.Sub(files, "assets")
	if err != nil {
		return nil, err
	}
	c := &console{cfg: cfg, deps: deps, log: log, pages: pages,
		sessions: newSessions(cfg.SessionKey, cfg.SessionTTL, cfg.Now, deps.Signouts, cfg.QueryTimeout),
		static:   http.StripPrefix(Prefix+"static/", http.FileServerFS(assets))}
	return c.accessLog(c.headers(c.routes())), nil
}

func (c *console) routes() *http.ServeMux {
	mux := http.NewServeMux()
	handle := func(pattern string, h http.HandlerFunc) { mux.HandleFunc(pattern, c.traced(pattern, h)) }
	handle("GET /ui/static/", c.assets)
	handle("GET /ui/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"runs", http.StatusSeeOther)
	})
	handle("GET /ui/signin", c.signinPage)
	handle("POST /ui/signin", c.signin)
	handle("POST /ui/signout", c.mutation(c.signout))

	handle("GET /ui/runs", c.page(c.runsPage))
	handle("GET /ui/runs/{id}", c.page(c.runPage))
	handle("GET /ui/runs/{id}/logs", c.page(c.runLogs))
	handle("POST /ui/runs/{id}/cancel", c.mutation(c.cancelRun))
	handle("POST /ui/runs/{id}/rollback", c.mutation(c.rollbackRun))
	handle("GET /ui/cluster", c.page(c.clusterPage))
	handle("GET /ui/schedules", c.page(c.schedulesPage))
	handle("GET /ui/schedules/{id}", c.page(c.schedulePage))
	handle("POST /ui/schedules/{id}/pause", c.mutation(c.pauseSchedule))
	handle("POST /ui/schedules/{id}/resume", c.mutation(c.resumeSchedule))
	handle("GET /ui/templates", c.page(c.templatesPage))
	handle("GET /ui/templates/{id}", c.page(c.templatePage))
	handle("POST /ui/templates/{id}/run", c.mutation(c.runTemplate))
	handle("GET /ui/change-requests", c.page(c.changesPage))
	handle("POST /ui/change-requests/{id}/approve", c.mutation(c.approve))
	handle("POST /ui/change-requests/{id}/reject", c.mutation(c.reject))
	handle("GET /ui/audit", c.page(c.auditPage))
	handle("/ui/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, nil, http.StatusNotFound, "no such page")
	})
	return mux
}

// CSP is the Content-Security-Policy of every answer: scripts, styles, images and
// fetches from this origin only, no inline script or style, no framing.
const CSP = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// headers sets the security headers every answer of the console carries.
func (c *console) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

func (c *console) assets(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	c.static.ServeHTTP(w, r)
}

// handler is a page handler for a signed-in person.
type handler func(w http.ResponseWriter, r *http.Request, sess session)

// current returns the session of the request's cookie. A session whose sign-out could
// not be read is refused (and logged): the person is asked to sign in again.
func (c *console) current(r *http.Request) (session, bool) {
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return session{}, false
	}
	sess, err := c.sessions.check(r.Context(), ck.Value)
	if errors.Is(err, errSignoutsUnreadable) {
		c.log.WarnContext(r.Context(), "console session refused: its sign-out state could not be read",
			"error", c.deps.Redact(err.Error()))
	}
	return sess, err == nil
}

// page serves h to a signed-in person; anyone else is sent to sign in (a fetch of a
// live fragment gets 401, so the script can send the whole page there).
func (c *console) page(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, ok := c.current(r)
		if !ok {
			if r.URL.Query().Get("partial") != "" || r.Header.Get("Accept") == "text/event-stream" {
				http.Error(w, "sign in again", http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, Prefix+"signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		noteWho(r.Context(), sess.Name)
		w.Header().Set("Cache-Control", "no-store")
		h(w, r, sess)
	}
}

// mutation serves a form POST: it needs a session, a request from this origin and the
// session's CSRF token. The use-case called next decides whether the principal may.
func (c *console) mutation(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, ok := c.current(r)
		if !ok {
			c.fail(w, r, nil, http.StatusUnauthorized, "your session has ended: sign in again")
			return
		}
		noteWho(r.Context(), sess.Name)
		if !sameOrigin(r) {
			c.fail(w, r, &sess, http.StatusForbidden, "the form was posted from another site")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, formLimit)
		if err := r.ParseForm(); err != nil {
			c.fail(w, r, &sess, http.StatusBadRequest, "the form could not be read: "+err.Error())
			return
		}
		if !c.sessions.checkCSRF(sess, r.PostForm.Get("csrf")) {
			c.fail(w, r, &sess, http.StatusForbidden, "the form's CSRF token is missing or invalid: reload the page and submit it again")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h(w, r, sess)
	}
}

// sameOrigin refuses a request whose browser says it came from another site. Requests
// without those headers (non-browser clients) still need the CSRF token.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		// The host only: behind a proxy that ends TLS the scheme seen here is http.
		u, err := url.Parse(o)
		return err == nil && u.Host == r.Host
	}
	return true
}

// principal is who the session stands for.
func principal(sess session) runs.Principal { return sess.principal() }
