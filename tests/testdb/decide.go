package testdb

import "fmt"

// Source is where a test database comes from.
type Source int

// The outcomes of Choose.
const (
	FromEnv       Source = iota + 1 // the URL in the environment variable
	FromContainer                   // a container started through testcontainers-go
	Fail                            // CI is set and nothing is available: fail the test
	Skip                            // nothing is available outside CI: skip the test
)

func (s Source) String() string {
	switch s {
	case FromEnv:
		return "env"
	case FromContainer:
		return "container"
	case Fail:
		return "fail"
	case Skip:
		return "skip"
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// Choice is the decision and, for Fail and Skip, why.
type Choice struct {
	Source Source
	Reason string
}

// Choose decides where a database comes from. envVar names the variable that was read
// (for the message), url is its value, ci tells whether CI is set, and docker reports
// whether a container engine answers; it is asked only when url is empty.
func Choose(envVar, url string, ci bool, docker func() (ok bool, why string)) Choice {
	if url != "" {
		return Choice{Source: FromEnv}
	}
	ok, why := docker()
	if ok {
		return Choice{Source: FromContainer}
	}
	reason := fmt.Sprintf("%s is not set and no container engine answers (%s)", envVar, why)
	if ci {
		return Choice{Source: Fail, Reason: reason + ": CI must test against a real database, so set " + envVar}
	}
	return Choice{Source: Skip, Reason: reason}
}
