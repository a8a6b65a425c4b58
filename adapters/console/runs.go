package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// runsPageSize is how many runs one page of the list shows.
const runsPageSize = 50

// timeInput is the layout of <input type="datetime-local">, read as UTC.
const timeInput = "2006-01-02T15:04"

type runsData struct {
	Runs     []runs.View
	Statuses []statusBox
	Name     string
	Pool     string
	Label    string
	Since    string
	Until    string
	// NextURL continues the list after this page; FirstURL goes back to its start.
	NextURL  string
	FirstURL string
	Paged    bool
	Error    string
}

type statusBox struct {
	Name    string
	Checked bool
}

// runsFilter reads the list filters of the page's form; a value the page cannot read is
// reported on the page rather than dropped silently.
func runsFilter(q url.Values) (runs.Filter, runsData, error) {
	d := runsData{Name: q.Get("name"), Pool: q.Get("pool"), Label: q.Get("label"), Since: q.Get("since"), Until: q.Get("until")}
	f := runs.Filter{Name: d.Name, Pool: d.Pool, Limit: runsPageSize, Cursor: q.Get("cursor")}
	picked := map[string]bool{}
	for _, st := range q["status"] {
		picked[st] = true
		f.Status = append(f.Status, st)
	}
	for _, st := range run.Statuses() {
		d.Statuses = append(d.Statuses, statusBox{Name: string(st), Checked: picked[string(st)]})
	}
	if d.Label != "" {
		f.Labels = map[string]string{}
		for _, pair := range strings.Split(d.Label, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || k == "" {
				return f, d, errors.New("label: write key=value, several separated by commas")
			}
			f.Labels[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	var err error
	if f.Since, err = readTime(d.Since, "since"); err != nil {
		return f, d, err
	}
	if f.Until, err = readTime(d.Until, "until"); err != nil {
		return f, d, err
	}
	return f, d, nil
}

func readTime(v, field string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{timeInput, timeInput + ":05", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New(field + ": write a UTC time as YYYY-MM-DDTHH:MM")
}

// runsPage is the run list with its filters; ?partial=1 answers the table body alone,
// which the page's script fetches every second or so to stay current.
func (c *console) runsPage(w http.ResponseWriter, r *http.Request, sess session) {
	q := r.URL.Query()
	f, d, err := runsFilter(q)
	if err != nil {
		d.Error = err.Error() // the form's own words: nothing was asked of the history
	} else if page, err := c.deps.Runs.List(r.Context(), principal(sess), f); err != nil {
		// A filter the use-case refuses is shown above the table, like the form's own.
		status, code, msg, known := c.deps.Explain(err)
		if !known || status >= 500 {
			c.failErr(w, r, sess, err)
			return
		}
		d.Error = code + ": " + msg
	} else {
		for _, rec := range page.Runs {
			d.Runs = append(d.Runs, runs.NewView(rec, c.deps.Redact))
		}
		if page.NextCursor != "" {
			next := cloneValues(q)
			next.Del("partial")
			next.Del("notice")
			next.Set("cursor", page.NextCursor)
			d.NextURL = Prefix + "runs?" + next.Encode()
		}
	}
	if q.Get("cursor") != "" {
		first := cloneValues(q)
		first.Del("cursor")
		first.Del("partial")
		d.FirstURL, d.Paged = Prefix+"runs?"+first.Encode(), true
	}
	c.show(w, r, sess, "runs", "Runs", "runs", d)
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

type runData struct {
	Run      runs.View
	Terminal bool
	Shards   []shardRow
	Config   string
	// ConfigError says why an operator sees no config (e.g. the vault key is missing).
	ConfigError string
}

type shardRow struct {
	runs.ShardRecord
	// Progress is rows written of rows read, for the <progress> bar.
	Progress float64
	Error    string
}

// runPage shows one run; ?partial=1 answers the live part (status, attempts, shards,
// error, actions) for the page's script.
func (c *console) runPage(w http.ResponseWriter, r *http.Request, sess session) {
	p := principal(sess)
	id := r.PathValue("id")
	rec, err := c.deps.Runs.Get(r.Context(), p, id)
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	d := runData{Run: runs.NewView(rec, c.deps.Redact), Terminal: run.Status(rec.Status).Terminal()}
	if rec.Shards != nil || rec.ShardCount > 0 {
		page, err := c.deps.Runs.Shards(r.Context(), p, id, "", runs.MaxListLimit)
		if err != nil {
			c.failErr(w, r, sess, err)
			return
		}
		for _, sh := range page.Shards {
			row := shardRow{ShardRecord: sh}
			if sh.Stats.RowsRead > 0 {
				row.Progress = float64(sh.Stats.RowsWritten) / float64(sh.Stats.RowsRead)
			}
			if sh.ErrorMessage != "" {
				row.Error = sh.ErrorCode + ": " + c.deps.Redact(sh.ErrorMessage)
			}
			d.Shards = append(d.Shards, row)
		}
	}
	if permissions(p).Manage && r.URL.Query().Get("partial") == "" {
		// Secrets show as the tokens the service leaves (${sealed:N}, ***).
		if d.Config, err = c.deps.Runs.Config(r.Context(), p, id); err != nil {
			_, code, msg, _ := c.deps.Explain(err)
			d.ConfigError = code + ": " + msg
		}
	}
	c.show(w, r, sess, "run", "Run "+rec.Name, "runs", d)
}

func (c *console) cancelRun(w http.ResponseWriter, r *http.Request, sess session) {
	id := r.PathValue("id")
	if _, _, err := c.deps.Runs.Cancel(r.Context(), principal(sess), id); err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	http.Redirect(w, r, Prefix+"runs/"+url.PathEscape(id)+"?notice=cancel", http.StatusSeeOther)
}

// rollbackRun submits a new run from the stored config of this one.
func (c *console) rollbackRun(w http.ResponseWriter, r *http.Request, sess session) {
	res, err := c.deps.Runs.Rollback(r.Context(), principal(sess), r.PathValue("id"), nil)
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	c.submitted(w, r, res)
}

// submitted sends the person to what a submission made: the new run, or the change
// request when it must be approved first.
func (c *console) submitted(w http.ResponseWriter, r *http.Request, res runs.SubmitResult) {
	if res.ChangeRequestID != "" {
		http.Redirect(w, r, Prefix+"change-requests?notice=proposed", http.StatusSeeOther)
		return
	}
	notice := "started"
	if res.Replayed {
		notice = "existed"
	}
	http.Redirect(w, r, Prefix+"runs/"+url.PathEscape(res.RunID)+"?notice="+notice, http.StatusSeeOther)
}
