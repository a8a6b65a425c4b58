package backoff_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain/backoff"
)

func TestDelayBounds(t *testing.T) {
	p := backoff.Policy{Initial: time.Second, Max: 30 * time.Second, Multiplier: 2}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i, w := range want {
		n := i + 1
		c := p.Ceiling(n)
		if c != w*time.Second {
			t.Fatalf("Ceiling(%d) = %s, want %s", n, c, w*time.Second)
		}
		lo, hi := p.Delay(n, 0), p.Delay(n, 0.999999)
		if lo != c/2 || hi >= c || hi < lo {
			t.Fatalf("Delay(%d) spans [%s, %s], want [%s, %s)", n, lo, hi, c/2, c)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []backoff.Policy{{}, {Initial: 2 * time.Second, Max: time.Second}, {Initial: 1, Max: 2, Multiplier: 0.5}} {
		if p.Validate() == nil {
			t.Fatalf("%+v accepted", p)
		}
	}
	if err := (backoff.Policy{Initial: time.Second, Max: time.Second}).Validate(); err != nil {
		t.Fatal(err)
	}
}
