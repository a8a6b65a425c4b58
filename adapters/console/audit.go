package console

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/sluicehq/sluice/application/runs"
)

// auditPageSize is how many entries one page of the audit trail shows.
const auditPageSize = 100

type auditData struct {
	Entries []auditRow
	NextURL string
}

type auditRow struct {
	runs.AuditEntry
	DetailsText string
}

// auditPage is the audit trail, oldest first from ?after (admin; the use-case refuses
// everyone else).
func (c *console) auditPage(w http.ResponseWriter, r *http.Request, sess session) {
	after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if err != nil || after < 0 {
		after = 0
	}
	list, err := c.deps.Runs.Audit(r.Context(), principal(sess), after, auditPageSize)
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	d := auditData{}
	for _, e := range list {
		raw, _ := json.Marshal(e.Details)
		d.Entries = append(d.Entries, auditRow{AuditEntry: e, DetailsText: string(raw)})
	}
	if len(list) == auditPageSize {
		d.NextURL = Prefix + "audit?after=" + strconv.FormatInt(list[len(list)-1].Seq, 10)
	}
	c.show(w, r, sess, "audit", "Audit", "audit", d)
}
