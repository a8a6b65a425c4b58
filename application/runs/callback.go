package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/domain/run"
)

// callbackStatuses are the statuses a callback can ask for (SPEC §2.5); none means all.
var callbackStatuses = []string{string(run.Completed), string(run.Failed), string(run.Cancelled)}

// payloadFields are the keys of the payload; extra_fields may not use them, so a
// receiver can trust run_id and status.
var payloadFields = []string{
	"run_id", "name", "status", "pool", "tenant", "labels", "run_key",
	"started_at", "finished_at", "stats", "error",
}

// CallbackPayload builds the callback of a terminal transition (SPEC §2.5): the URL and
// the JSON body {run_id, name, status, pool, tenant, labels, run_key, started_at,
// finished_at, stats, error, …extra_fields}. ok is false when the run has no callback,
// the status is not terminal, or the callback's `on` does not list the status. It is a
// CallbackBuilder: the store calls it inside the transaction of the transition, so the
// outbox row commits with it.
//
// Absent values are JSON null (tenant, run_key, started_at of a run that never started,
// error of a completed run); labels is always an object. Times are RFC 3339 UTC.
func CallbackPayload(in CallbackInput) (url string, payload []byte, ok bool) {
	cb := in.Callback
	if cb == nil || cb.URL == "" || !run.Status(in.Status).Terminal() {
		return "", nil, false
	}
	if len(cb.On) > 0 && !slices.Contains(cb.On, in.Status) {
		return "", nil, false
	}
	body := make(map[string]any, len(payloadFields)+len(cb.ExtraFields))
	// Extra fields first: a standard field always wins (submit refuses collisions; this
	// guards records written before that rule).
	maps.Copy(body, cb.ExtraFields)
	labels := in.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	var errObj any
	if in.ErrorCode != "" || in.ErrorMessage != "" {
		errObj = map[string]string{"code": in.ErrorCode, "message": in.ErrorMessage}
	}
	body["run_id"] = in.RunID
	body["name"] = in.Name
	body["status"] = in.Status
	body["pool"] = in.Pool
	body["tenant"] = nullable(in.Tenant)
	body["labels"] = labels
	body["run_key"] = nullable(in.RunKey)
	body["started_at"] = timeOrNull(in.StartedAt)
	body["finished_at"] = timeOrNull(in.FinishedAt)
	body["stats"] = in.Stats
	body["error"] = errObj
	b, err := json.Marshal(body)
	if err != nil {
		// Only an extra field that JSON cannot encode gets here, and submit decoded
		// those from JSON; without a body there is no callback to send.
		return "", nil, false
	}
	return cb.URL, b, true
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func timeOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// checkCallback validates a submitted callback and returns the form to store: `on`
// sorted without duplicates. The URL passes the address policy, and so does every
// address its host resolves to now (the sender checks again at send time).
func (s *Service) checkCallback(ctx context.Context, cb *Callback) (*Callback, error) {
	if cb == nil {
		return nil, nil
	}
	if s.policyErr != nil {
		return nil, fmt.Errorf("callbacks are unavailable: %w", s.policyErr)
	}
	host, err := s.policy.CheckURL(cb.URL)
	if err != nil {
		return nil, &CallbackRefusedError{Path: "callback.url", Message: err.Error(), Err: err}
	}
	out := &Callback{URL: cb.URL}
	for i, on := range cb.On {
		if !slices.Contains(callbackStatuses, on) {
			return nil, &CallbackRefusedError{
				Path:    "callback.on[" + strconv.Itoa(i) + "]",
				Message: fmt.Sprintf("%q is not a terminal status: use completed, failed or cancelled", on),
			}
		}
		if !slices.Contains(out.On, on) {
			out.On = append(out.On, on)
		}
	}
	slices.Sort(out.On)
	for _, k := range slices.Sorted(maps.Keys(cb.ExtraFields)) {
		if slices.Contains(payloadFields, k) {
			return nil, &CallbackRefusedError{
				Path:    "callback.extra_fields." + k,
				Message: fmt.Sprintf("%q is a field of the callback payload itself: rename the extra field", k),
			}
		}
	}
	if _, err := json.Marshal(cb.ExtraFields); err != nil {
		return nil, &CallbackRefusedError{Path: "callback.extra_fields", Message: "extra_fields must be JSON values"}
	}
	if len(cb.ExtraFields) > 0 {
		out.ExtraFields = maps.Clone(cb.ExtraFields)
	}
	// Resolving is I/O, so it comes after every check that is not.
	if err := s.checkResolved(ctx, host); err != nil {
		return nil, err
	}
	return out, nil
}

// checkResolved refuses a host any of whose addresses the policy refuses. A listed host
// is not resolved at all. A host that does not resolve is refused too: its addresses
// cannot be checked, and no callback could reach it.
func (s *Service) checkResolved(ctx context.Context, host string) error {
	if s.policy.Allowed(host) {
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // a literal address was checked by CheckURL
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	ips, err := s.deps.Resolver.LookupIP(ctx, host)
	if err == nil && len(ips) == 0 {
		err = errors.New("no addresses")
	}
	if err != nil {
		return &CallbackRefusedError{
			Path:    "callback.url",
			Message: fmt.Sprintf("callback host %q does not resolve, so its addresses cannot be checked: give a host this server can resolve", host),
		}
	}
	for _, ip := range ips {
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		if err := s.policy.CheckAddr(host, a); err != nil {
			return &CallbackRefusedError{Path: "callback.url", Message: err.Error(), Err: err}
		}
	}
	return nil
}
