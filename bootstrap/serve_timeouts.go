package bootstrap

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Defaults of the request time bounds (SPEC §14.3).
const (
	DefaultReadTimeoutSecs  = 30
	DefaultIdleTimeoutSecs  = 120
	DefaultQueryTimeoutSecs = 10
)

// timeoutFlags bound how long one request may hold the server: receiving it, keeping its
// connection idle, and the history reads it makes.
type timeoutFlags struct {
	readSecs, idleSecs, querySecs int
}

func (t *timeoutFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&t.readSecs, "read-timeout-secs", DefaultReadTimeoutSecs, "longest time to receive one request, headers and body; a slower client's connection is closed (followed log streams lift it once the request is read)")
	fs.IntVar(&t.idleSecs, "idle-timeout-secs", DefaultIdleTimeoutSecs, "how long an idle keep-alive connection is kept open")
	fs.IntVar(&t.querySecs, "query-timeout-secs", DefaultQueryTimeoutSecs, "statement timeout of every history read that serves a request; past it the request answers 503 query_timeout")
}

// timeouts are the validated values.
type timeouts struct {
	Read, Idle, Query time.Duration
}

// settings reports every bad value, each naming its flag.
func (t *timeoutFlags) settings() (timeouts, error) {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"read-timeout-secs", t.readSecs}, {"idle-timeout-secs", t.idleSecs}, {"query-timeout-secs", t.querySecs}} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("invalid value for --%s: %d: at least 1 second", f.name, f.v))
		}
	}
	return timeouts{Read: secs(t.readSecs), Idle: secs(t.idleSecs), Query: secs(t.querySecs)}, errors.Join(errs...)
}

// headerTimeout is the server's ReadHeaderTimeout: the plumbing's own bound, never longer
// than the whole request may take.
func (t timeouts) headerTimeout() time.Duration { return min(readHeaderTimeout, t.Read) }
