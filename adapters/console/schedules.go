package console

import (
	"net/http"
	"net/url"
	"time"

	"github.com/sluicehq/sluice/application/scheduling"
)

// scheduleTicks is how many recorded ticks the schedule page lists.
const scheduleTicks = 20

type schedulesData struct {
	Schedules []*scheduling.View
}

type scheduleData struct {
	Schedule *scheduling.View
	Next     []time.Time
	Ticks    []scheduling.Tick
}

func (c *console) schedulesPage(w http.ResponseWriter, r *http.Request, sess session) {
	if c.deps.Schedules == nil {
		c.fail(w, r, &sess, http.StatusNotFound, "this server has no schedules")
		return
	}
	list, err := c.deps.Schedules.List(r.Context(), principal(sess))
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	c.show(w, r, sess, "schedules", "Schedules", "schedules", schedulesData{Schedules: list})
}

// schedulePage shows one schedule: its settings, its next five ticks (with the DST rules
// ticks use) and its last recorded ticks.
func (c *console) schedulePage(w http.ResponseWriter, r *http.Request, sess session) {
	if c.deps.Schedules == nil {
		c.fail(w, r, &sess, http.StatusNotFound, "this server has no schedules")
		return
	}
	p, id := principal(sess), r.PathValue("id")
	sc, err := c.deps.Schedules.Get(r.Context(), p, id)
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	d := scheduleData{Schedule: sc}
	if prev, err := c.deps.Schedules.Preview(scheduling.PreviewRequest{Cron: sc.Cron, Timezone: sc.Timezone, Count: 5}); err == nil {
		d.Next = prev.Instants
	}
	if d.Ticks, err = c.deps.Schedules.Ticks(r.Context(), p, id, time.Time{}, scheduleTicks); err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	c.show(w, r, sess, "schedule", "Schedule "+sc.ID, "schedules", d)
}

func (c *console) pauseSchedule(w http.ResponseWriter, r *http.Request, sess session) {
	c.setPaused(w, r, sess, true)
}

func (c *console) resumeSchedule(w http.ResponseWriter, r *http.Request, sess session) {
	c.setPaused(w, r, sess, false)
}

func (c *console) setPaused(w http.ResponseWriter, r *http.Request, sess session, paused bool) {
	if c.deps.Schedules == nil {
		c.fail(w, r, &sess, http.StatusNotFound, "this server has no schedules")
		return
	}
	id := r.PathValue("id")
	call, notice := c.deps.Schedules.Resume, "resumed"
	if paused {
		call, notice = c.deps.Schedules.Pause, "paused"
	}
	if _, err := call(r.Context(), principal(sess), id); err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	http.Redirect(w, r, Prefix+"schedules/"+url.PathEscape(id)+"?notice="+notice, http.StatusSeeOther)
}
