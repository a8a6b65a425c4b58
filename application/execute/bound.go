package execute

import (
	"time"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// bound is the typed value of a param, now or backfill directive: what a SQL query
// receives as a bind parameter, and (as ParamText) what other text receives.
func (r *resolution) bound(path string, n *pipeline.Node, d pipeline.Directive) (any, bool) {
	switch d.Kind {
	case pipeline.DirectiveParam:
		return r.param(path, n, d)
	case pipeline.DirectiveNow:
		return r.now(path, n, d)
	case pipeline.DirectiveBackfill:
		if r.opts.Backfill == nil {
			r.fail(path, n, "%s only resolves in a backfill run", d.Raw)
			return nil, false
		}
		t := r.opts.Backfill.Start
		if d.Arg == pipeline.BackfillEnd {
			t = r.opts.Backfill.End
		}
		return t.Truncate(time.Second), true
	}
	r.fail(path, n, "%s cannot be resolved", d.Raw)
	return nil, false
}

func (r *resolution) param(path string, n *pipeline.Node, d pipeline.Directive) (any, bool) {
	if _, ok := r.declared[d.Arg]; !ok {
		if !r.quiet[d.Arg] {
			r.fail(path, n, "%s: no param %q is declared in params", d.Raw, d.Arg)
		}
		return nil, false
	}
	v, ok := r.values[d.Arg]
	if !ok {
		if !r.quiet[d.Arg] {
			r.fail(path, n, "%s: param %q has no value: supply it or give it a default", d.Raw, d.Arg)
		}
		return nil, false
	}
	return v, true
}

// now is ${now.date} (a pipeline.Date), ${now.datetime} (a time.Time in UTC, whole
// seconds) or ${now.unix} (int64 seconds).
func (r *resolution) now(path string, n *pipeline.Node, d pipeline.Directive) (any, bool) {
	if r.opts.Logical.IsZero() {
		r.fail(path, n, "%s needs the run's logical instant", d.Raw)
		return nil, false
	}
	switch d.Arg {
	case pipeline.NowDate:
		if r.opts.RunDate != "" {
			if day, err := pipeline.ParseDate(r.opts.RunDate); err == nil {
				return day, true
			}
		}
		zone := r.opts.Zone
		if zone == nil {
			zone = time.UTC
		}
		return pipeline.DateOf(r.opts.Logical.In(zone)), true
	case pipeline.NowDatetime:
		return r.opts.Logical.UTC().Truncate(time.Second), true
	default:
		return r.opts.Logical.Unix(), true
	}
}
