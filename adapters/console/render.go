package console

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/sluicehq/sluice/application/runs"
)

// view is what every page template gets.
type view struct {
	Title  string
	Nav    string // the menu entry to mark current
	Me     runs.Principal
	CSRF   string
	Can    can
	Notice string
	Data   any
}

// can says which controls to show. It mirrors the use-cases' rules so a principal is
// not offered what will be refused; the use-cases still decide every request.
type can struct {
	Operate   bool // run templates, cancel runs (tenant operators on their own tenant too)
	Manage    bool // untenanted operator or admin: rollback, pause, decide, read configs
	Admin     bool // untenanted admin: the audit trail
	Untenants bool // untenanted: the cluster, schedules and change requests pages
}

// permissions asks the use-cases' own rule (runs.Require) rather than ranking roles
// here, so the controls shown cannot drift from what the use-cases allow.
func permissions(p runs.Principal) can {
	may := func(p runs.Principal, role runs.Role) bool { return runs.Require(p, role, "") == nil }
	return can{
		// A tenant operator cancels its tenant's runs and runs its templates.
		Operate:   may(runs.Principal{Name: p.Name, Role: p.Role}, runs.Operator),
		Manage:    may(p, runs.Operator),
		Admin:     may(p, runs.Admin),
		Untenants: may(p, runs.Viewer),
	}
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"whenp": func(s *string) string {
		if s == nil {
			return "—"
		}
		t, err := time.Parse(time.RFC3339Nano, *s)
		if err != nil {
			return *s
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"age":  func(d time.Duration) string { return d.Round(100 * time.Millisecond).String() },
	"join": strings.Join,
	"labels": func(m map[string]string) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + m[k]
		}
		return strings.Join(parts, ", ")
	},
}

// formatValue writes a param's default, bound or choice as a form field wants it.
func formatValue(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case time.Time:
		return t.Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}

// parsePages parses every page with the layout and the shared fragments.
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("").Funcs(funcs).ParseFS(files, "pages/layout.html")
	if err != nil {
		return nil, fmt.Errorf("console pages: %w", err)
	}
	names, err := fs.Glob(files, "pages/*.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(files, n)
		if err != nil {
			return nil, fmt.Errorf("console page %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// render writes a whole page (tmpl "page") or one of its fragments (tmpl names a
// template defined by the page, for live updates).
func (c *console) render(w http.ResponseWriter, r *http.Request, status int, name, tmpl string, v view) {
	t, ok := c.pages[name]
	if !ok {
		c.log.ErrorContext(r.Context(), "console page missing", "page", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, tmpl, v); err != nil {
		c.log.ErrorContext(r.Context(), "console page failed", "page", name, "error", err.Error())
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// notices are the messages a redirect after a form may ask a page to show; a link
// names one by key, so it cannot put words of its own on the page.
var notices = map[string]string{
	"started":  "Run started.",
	"existed":  "This run already existed.",
	"cancel":   "Cancel requested.",
	"proposed": "Proposed as a change request: another operator or admin must approve it.",
	"paused":   "Schedule paused.",
	"resumed":  "Schedule resumed.",
	"approved": "Change request approved: its run was created.",
	"rejected": "Change request rejected.",
}

// show renders a page for sess, or its fragment when the request asks for one.
func (c *console) show(w http.ResponseWriter, r *http.Request, sess session, name, title, nav string, data any) {
	v := c.viewFor(sess, title, nav, data)
	v.Notice = notices[r.URL.Query().Get("notice")]
	// Pages without a live part answer a fragment request with the whole page.
	if r.URL.Query().Get("partial") != "" && c.pages[name] != nil && c.pages[name].Lookup("live") != nil {
		c.render(w, r, http.StatusOK, name, "live", v)
		return
	}
	c.render(w, r, http.StatusOK, name, "page", v)
}

func (c *console) viewFor(sess session, title, nav string, data any) view {
	p := sess.principal()
	return view{Title: title, Nav: nav, Me: p, CSRF: c.sessions.csrf(sess), Can: permissions(p), Data: data}
}

// requestIDHeader is where the server put the request's id before the console answers
// (the API's rules: the client's valid X-Request-Id or a new one).
const requestIDHeader = "X-Request-Id"

// fail answers with an error page; sess is nil when nobody is signed in. The page names
// the request id, which every log line of the request carries, so "the server log has the
// details" can be followed to them.
func (c *console) fail(w http.ResponseWriter, r *http.Request, sess *session, status int, message string) {
	rid := w.Header().Get(requestIDHeader)
	v := view{Title: http.StatusText(status), Data: errorData{Status: status, Message: message, RequestID: rid}}
	if sess != nil {
		v = c.viewFor(*sess, http.StatusText(status), "", v.Data)
	}
	if r.URL.Query().Get("partial") != "" {
		if rid != "" {
			message += " (request id " + rid + ")"
		}
		http.Error(w, message, status)
		return
	}
	c.render(w, r, status, "error", "page", v)
}

type errorData struct {
	Status    int
	Message   string
	RequestID string
}

// failErr answers a use-case error as the API would (status and message), logging what
// the API does not map.
func (c *console) failErr(w http.ResponseWriter, r *http.Request, sess session, err error) {
	status, code, msg, known := c.deps.Explain(err)
	if !known {
		c.log.ErrorContext(r.Context(), "console request failed", "path", r.URL.Path, "error", c.deps.Redact(err.Error()))
	}
	c.fail(w, r, &sess, status, code+": "+msg)
}
