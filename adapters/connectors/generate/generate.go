package generate

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/cursor"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/state"
)

// Type is the connector's type name.
const Type = "generate"

// Columns is the fixed set of columns a generate source can produce, in default order.
var Columns = []string{"id", "name", "amount", "active", "created_at"}

// Connector is the generate source.
type Connector struct{}

// New returns the generate connector.
func New() *Connector { return &Connector{} }

func minimum(n int64) *int64 { return &n }

// Spec declares the config keys.
func (*Connector) Spec() pipeline.Spec {
	return pipeline.Spec{
		Type:        Type,
		Roles:       pipeline.RoleSource,
		Description: "Synthetic rows, deterministic for a seed: id (1, 2, …), name, amount, active, created_at. For demos, tests and benchmarks.",
		Fields: []pipeline.FieldSpec{
			{Name: "count", Type: pipeline.FieldInt, Role: pipeline.RoleSource, Required: true, Min: minimum(0),
				Description: "Number of rows to produce; ids run from 1 to count."},
			{Name: "seed", Type: pipeline.FieldInt, Role: pipeline.RoleSource, Default: int64(1),
				Description: "Seed of the values; the same seed always produces the same rows."},
			{Name: "rate", Type: pipeline.FieldNumber, Role: pipeline.RoleSource,
				Description: "Maximum rows per second; unset means as fast as possible."},
			{Name: "columns", Type: pipeline.FieldStrings, Role: pipeline.RoleSource, Enum: slices.Clone(Columns),
				Description: "Columns to produce, in this order; default id, name, amount, active, created_at."},
			cfg.BatchSizeField(),
		},
		Check: check,
	}
}

func check(_ pipeline.Role, c map[string]any, path string) pipeline.Errors {
	var errs pipeline.Errors
	if _, err := parse(c, 0); err != nil {
		errs = append(errs, pipeline.FieldError{Path: path, Message: err.Error()})
	}
	return errs
}

type options struct {
	count   int64
	seed    int64
	rate    float64
	columns []string
	batch   int
}

func parse(c map[string]any, requested int) (options, error) {
	var o options
	var err error
	if _, ok := c["count"]; !ok {
		return o, fmt.Errorf("config key \"count\" is required")
	}
	if o.count, err = cfg.Int(c, "count", 0); err != nil {
		return o, err
	}
	if o.count < 0 {
		return o, fmt.Errorf("config key \"count\" must be 0 or more, got %d", o.count)
	}
	if o.seed, err = cfg.Int(c, "seed", 1); err != nil {
		return o, err
	}
	rate, set, err := cfg.Float(c, "rate")
	if err != nil {
		return o, err
	}
	if set && rate <= 0 {
		return o, fmt.Errorf("config key \"rate\" must be greater than 0, got %v", rate)
	}
	o.rate = rate
	if o.columns, err = cfg.Strings(c, "columns"); err != nil {
		return o, err
	}
	if o.columns == nil {
		o.columns = slices.Clone(Columns)
	}
	if len(o.columns) == 0 {
		return o, fmt.Errorf("config key \"columns\" must name at least one of %v", Columns)
	}
	for i, col := range o.columns {
		if !slices.Contains(Columns, col) {
			return o, fmt.Errorf("config key \"columns\": unknown column %q (choose from %v)", col, Columns)
		}
		if slices.Contains(o.columns[:i], col) {
			return o, fmt.Errorf("config key \"columns\": column %q listed twice", col)
		}
	}
	if o.batch, err = cfg.BatchSize(requested, c); err != nil {
		return o, err
	}
	if o.rate > 0 {
		// Pages of about one second of rows, so a slow rate still makes progress visible.
		o.batch = min(o.batch, max(1, int(math.Ceil(o.rate))))
	}
	return o, nil
}

// OpenSource starts a generator. Incremental reads need cursor "id" and resume after
// the bookmarked id.
func (*Connector) OpenSource(_ context.Context, req execute.ReadRequest) (execute.Source, error) {
	o, err := parse(req.Config, req.BatchSize)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	s := &source{opts: o, next: 1, gen: newGenerator(o.seed)}
	if inc := req.Incremental; inc != nil {
		if inc.Cursor != "id" {
			return nil, fmt.Errorf("generate: incremental cursor must be \"id\", got %q", inc.Cursor)
		}
		if !slices.Contains(o.columns, "id") {
			return nil, fmt.Errorf("generate: incremental cursor \"id\" needs the id column in config key \"columns\"")
		}
		s.incremental = true
		if inc.After != nil && inc.After.Value != nil {
			after, ok := asID(inc.After.Value)
			if !ok {
				return nil, fmt.Errorf("generate: bookmark %v is not an id", inc.After.Value)
			}
			s.next = max(1, after+1)
		}
	}
	return s, nil
}

func asID(v any) (int64, bool) {
	if i, ok := v.(int64); ok {
		return i, true
	}
	text := cursor.Text(v)
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<62 {
		return 0, false
	}
	return int64(math.Floor(f)), true
}

type source struct {
	opts        options
	gen         *generator
	next        int64 // next id to produce
	incremental bool
	started     time.Time
	emitted     int64
}

func (s *source) Next(ctx context.Context) (*execute.Page, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	if s.next > s.opts.count {
		return nil, io.EOF
	}
	n := int(min(int64(s.opts.batch), s.opts.count-s.next+1))
	if s.opts.rate > 0 {
		if err := s.wait(ctx, n); err != nil {
			return nil, err
		}
	}
	p := s.gen.page(s.opts.columns, s.next, n)
	s.next += int64(n)
	s.emitted += int64(n)
	if s.incremental {
		p.Bookmark = &state.Bookmark{Cursor: "id", Value: s.next - 1}
	}
	return p, nil
}

// wait holds the page back until its rows are due at the configured rate, measured from
// the first page so that time spent downstream counts against the budget.
func (s *source) wait(ctx context.Context, n int) error {
	now := time.Now()
	if s.started.IsZero() {
		s.started = now
	}
	due := s.started.Add(time.Duration(float64(s.emitted+int64(n)) / s.opts.rate * float64(time.Second)))
	d := due.Sub(now)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("generate: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

func (s *source) Close() error { return nil }
