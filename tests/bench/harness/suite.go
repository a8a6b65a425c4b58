package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Case is one row of a suite's table: one pipeline, timed as a whole.
type Case struct {
	// ID selects the case in --only (short, lower-case, no spaces).
	ID string
	// Label is the table's pipeline column, e.g. "CSV → JSONL".
	Label string
	// Baseline marks the case every other row of the suite is compared against (at most
	// one per suite).
	Baseline bool
	// Run performs one timed run. It starts from a clean output (a repeat must not find
	// the previous run's rows) and returns what it measured.
	Run func(ctx context.Context, env *Env) (Sample, error)
	// Count returns how many rows the run's output holds; a count other than env.Rows
	// fails the case, so a broken run can never report a speed.
	Count func(ctx context.Context, env *Env) (int64, error)
	// Cleanup removes the output once counted (skipped under --keep); may be nil.
	Cleanup func(env *Env) error
}

// Suite is a named set of cases run in order after Prepare.
type Suite struct {
	Name        string
	Description string
	// Prepare builds the suite's inputs (not timed as a row; it may add notes with
	// env.Note). May be nil.
	Prepare func(ctx context.Context, env *Env) error
	Cases   []Case
	// Table, when set, measures the suite as a whole and returns its own table (for
	// numbers that are not rows per second); the suite then has no Cases.
	Table TableFunc
}

// Registry holds the suites the program knows, by name. It is built once from a list
// (no init-time registration), so adding a suite is a file that returns a Suite plus
// one entry in that list.
type Registry struct {
	suites []Suite
}

// NewRegistry checks the suites (unique names, unique case IDs, at most one baseline per
// suite, every case runnable) and returns them as a registry. The first suite is the
// default of --suite.
func NewRegistry(suites ...Suite) (*Registry, error) {
	seen := map[string]bool{}
	for _, s := range suites {
		if s.Name == "" || strings.ContainsAny(s.Name, " ,") {
			return nil, fmt.Errorf("suite name %q: must be non-empty, without spaces or commas", s.Name)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("suite %q is registered twice", s.Name)
		}
		seen[s.Name] = true
		if err := checkCases(s); err != nil {
			return nil, err
		}
	}
	return &Registry{suites: slices.Clone(suites)}, nil
}

func checkCases(s Suite) error {
	if s.Table != nil {
		if len(s.Cases) > 0 {
			return fmt.Errorf("suite %q has both a Table and Cases; a table suite measures itself", s.Name)
		}
		return nil
	}
	if len(s.Cases) == 0 {
		return fmt.Errorf("suite %q has no cases", s.Name)
	}
	ids := map[string]bool{}
	baselines := 0
	for _, c := range s.Cases {
		switch {
		case c.ID == "" || strings.ContainsAny(c.ID, " ,"):
			return fmt.Errorf("suite %q: case ID %q must be non-empty, without spaces or commas", s.Name, c.ID)
		case ids[c.ID]:
			return fmt.Errorf("suite %q: case ID %q is used twice", s.Name, c.ID)
		case c.Run == nil || c.Count == nil:
			return fmt.Errorf("suite %q: case %q needs both Run and Count", s.Name, c.ID)
		}
		ids[c.ID] = true
		if c.Baseline {
			baselines++
		}
	}
	if baselines > 1 {
		return fmt.Errorf("suite %q has %d baseline cases; at most one is allowed", s.Name, baselines)
	}
	return nil
}

// Names lists the registered suite names in registration order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.suites))
	for i, s := range r.suites {
		names[i] = s.Name
	}
	return names
}

func (r *Registry) defaultSuite() string {
	if len(r.suites) == 0 {
		return ""
	}
	return r.suites[0].Name
}

// Lookup returns the suite called name; the error names --suite and the known suites.
func (r *Registry) Lookup(name string) (Suite, error) {
	for _, s := range r.suites {
		if s.Name == name {
			return s, nil
		}
	}
	return Suite{}, fmt.Errorf("invalid value for --suite: unknown suite %q (known: %s)", name, strings.Join(r.Names(), ", "))
}

// Select returns the cases of s named in only, in the suite's order; an empty only
// selects every case. An unknown ID is an error naming --only and the suite's IDs.
func Select(s Suite, only []string) ([]Case, error) {
	if len(only) == 0 {
		return slices.Clone(s.Cases), nil
	}
	ids := make([]string, len(s.Cases))
	for i, c := range s.Cases {
		ids[i] = c.ID
	}
	for _, id := range only {
		if !slices.Contains(ids, id) {
			return nil, fmt.Errorf("invalid value for --only: suite %q has no case %q (cases: %s)", s.Name, id, strings.Join(ids, ", "))
		}
	}
	var out []Case
	for _, c := range s.Cases {
		if slices.Contains(only, c.ID) {
			out = append(out, c)
		}
	}
	return out, nil
}
