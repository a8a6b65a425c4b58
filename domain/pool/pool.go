package pool

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain/naming"
)

// Default is the pool of a run that names none and of a member started without --pool.
const Default = "default"

// Validate checks a pool name.
func Validate(name string) error { return naming.Check("pool", name) }

// Resolve picks a run's pool: the request's, else the config's (or template's), else
// Default. It does not validate: the result is checked once, wherever it came from.
func Resolve(request, config string) string {
	switch {
	case request != "":
		return request
	case config != "":
		return config
	default:
		return Default
	}
}

// ErrOverrideDenied is wrapped by OverrideDeniedError.
var ErrOverrideDenied = errors.New("pool override denied")

// Override is a template's pool_override setting: Any for `pool_override: true`, or the
// pools callers may choose. The zero value lets callers keep only the template's pool.
type Override struct {
	Any     bool
	Allowed []string
}

// Permits reports whether a caller may run the template in requested. Asking for no pool
// or for the template's own pool is always allowed. templatePool is the template's
// resolved pool (Resolve("", its config pool)).
func (o Override) Permits(requested, templatePool string) bool {
	return requested == "" || requested == templatePool || o.Any || slices.Contains(o.Allowed, requested)
}

// Check is Permits as an error: nil when allowed, an *OverrideDeniedError otherwise.
func (o Override) Check(requested, templatePool string) error {
	if o.Permits(requested, templatePool) {
		return nil
	}
	return &OverrideDeniedError{Requested: requested, Template: templatePool, Allowed: slices.Clone(o.Allowed)}
}

// OverrideDeniedError is a request for a pool the template does not let callers choose.
type OverrideDeniedError struct {
	Requested string
	Template  string
	Allowed   []string
}

func (e *OverrideDeniedError) Error() string {
	msg := fmt.Sprintf("pool %q is not allowed for this template (its pool is %q)", e.Requested, e.Template)
	if len(e.Allowed) > 0 {
		msg += "; its pool_override allows " + strings.Join(e.Allowed, ", ")
	} else {
		msg += "; set pool_override on the template to let callers choose another pool"
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrOverrideDenied) true.
func (e *OverrideDeniedError) Unwrap() error { return ErrOverrideDenied }
