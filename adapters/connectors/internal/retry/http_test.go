package retry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/reach"
)

func TestStatusMarksRateLimitsAndServerErrors(t *testing.T) {
	base := errors.New("answered")
	h := http.Header{"Retry-After": []string{"7"}}
	for status, transient := range map[int]bool{429: true, 500: true, 503: true, 400: false, 401: false, 404: false} {
		err := retry.Status(base, status, h)
		if execute.IsTransient(err) != transient {
			t.Fatalf("status %d: transient=%v", status, !transient)
		}
		if d, _ := execute.RetryAfter(err); transient && d != 7*time.Second {
			t.Fatalf("status %d: Retry-After %s", status, d)
		}
	}
	if d := retry.ParseRetryAfter(time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)); d < 59*time.Minute {
		t.Fatalf("an HTTP-date Retry-After gave %s", d)
	}
}

func TestNetworkMarksConnectionFailuresButNotRefusals(t *testing.T) {
	ctx := context.Background()
	if err := retry.Network(ctx, &net.OpError{Op: "dial", Err: errors.New("connection refused")}); !execute.IsTransient(err) {
		t.Fatalf("a refused connection is transient: %v", err)
	}
	refusal := &reach.RefusedError{Kind: reach.ErrHostRefused, Key: "url", Target: "169.254.169.254:80", Reason: "link-local"}
	if err := retry.Network(ctx, &net.OpError{Op: "dial", Err: refusal}); execute.IsTransient(err) {
		t.Fatalf("a confinement refusal is never transient: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := retry.Network(cancelled, errors.New("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancellation: %v", err)
	}
}
