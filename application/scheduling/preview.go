package scheduling

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/domain/schedule"
)

// PreviewRequest asks what a cron expression will do (GET /v1/schedules/preview).
type PreviewRequest struct {
	Cron     string
	Timezone string    // "" = the server's --timezone
	From     time.Time // instants strictly after it; zero = now
	Count    int       // 0 = DefaultPreviewCount
}

// Preview is its answer: the next instants, in the schedule's zone.
type Preview struct {
	Cron     string
	Timezone string
	From     time.Time
	Instants []time.Time // in the zone; fewer than Count when the expression runs out
}

// Preview lists the next instants of a cron expression with the DST rules ticks use.
// It needs no role beyond the route's (viewer) and reads nothing stored.
func (s *Service) Preview(req PreviewRequest) (Preview, error) {
	spec, err := schedule.Parse(req.Cron)
	if err != nil {
		return Preview{}, invalid("cron", err.Error())
	}
	loc := s.cfg.Zone
	if req.Timezone != "" {
		if loc, err = schedule.LoadZone(req.Timezone); err != nil {
			return Preview{}, invalid("timezone", err.Error())
		}
	}
	count := req.Count
	if count == 0 {
		count = DefaultPreviewCount
	}
	if count < 1 || count > MaxPreviewCount {
		return Preview{}, invalid("count", fmt.Sprintf("%d is outside 1..%d", count, MaxPreviewCount))
	}
	from := req.From
	if from.IsZero() {
		from = s.deps.Clock()
	}
	return Preview{Cron: spec.String(), Timezone: loc.String(), From: from.UTC(), Instants: spec.NextN(from, loc, count)}, nil
}
