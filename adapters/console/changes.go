package console

import (
	"net/http"

	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/runs"
)

type changesData struct {
	Requests []*approvals.ChangeRequest
	Status   string
}

// changesPage lists change requests, newest first, with approve and reject for
// operators; the use-case refuses a proposer deciding its own.
func (c *console) changesPage(w http.ResponseWriter, r *http.Request, sess session) {
	if c.deps.Approvals == nil {
		c.fail(w, r, &sess, http.StatusNotFound, "this server records no change requests")
		return
	}
	f := approvals.Filter{Limit: runs.MaxListLimit}
	status := r.URL.Query().Get("status")
	if status != "" {
		st, err := approvals.ParseStatus(status)
		if err != nil {
			c.fail(w, r, &sess, http.StatusBadRequest, err.Error())
			return
		}
		f.Status = st
	}
	list, err := c.deps.Approvals.List(r.Context(), principal(sess), f)
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	c.show(w, r, sess, "changes", "Change requests", "changes", changesData{Requests: list, Status: status})
}

func (c *console) approve(w http.ResponseWriter, r *http.Request, sess session) {
	c.decide(w, r, sess, true)
}

func (c *console) reject(w http.ResponseWriter, r *http.Request, sess session) {
	c.decide(w, r, sess, false)
}

func (c *console) decide(w http.ResponseWriter, r *http.Request, sess session, approve bool) {
	if c.deps.Approvals == nil {
		c.fail(w, r, &sess, http.StatusNotFound, "this server records no change requests")
		return
	}
	call, notice := c.deps.Approvals.Reject, "rejected"
	if approve {
		call, notice = c.deps.Approvals.Approve, "approved"
	}
	if _, err := call(r.Context(), principal(sess), r.PathValue("id")); err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	http.Redirect(w, r, Prefix+"change-requests?notice="+notice, http.StatusSeeOther)
}
