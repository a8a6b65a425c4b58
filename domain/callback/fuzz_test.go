package callback_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain/callback"
)

// FuzzCheckURL: a callback URL is accepted with a host, or refused with a RefusedError
// that never quotes the URL (it may carry credentials); it never panics.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://hooks.example.com/x", "http://169.254.169.254/latest", "http://[fe80::1]/",
		"http://metadata.google.internal/", "http://u:s3cretpw@h/", "http://a%00b/", "\xff://x"} {
		f.Add(s)
	}
	p, err := callback.NewPolicy(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		host, err := p.CheckURL(raw)
		if err == nil {
			if host == "" {
				t.Fatalf("%q accepted without a host", raw)
			}
			return
		}
		var re *callback.RefusedError
		if !errors.As(err, &re) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		if len(raw) >= 8 && strings.Contains(err.Error(), raw) {
			t.Fatalf("the refusal quotes the URL: %v", err)
		}
	})
}
