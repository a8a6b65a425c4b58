package templates

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/naming"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
)

// Deps are the ports of the template use-cases; Sealer is optional (no vault key).
type Deps struct {
	Store  Store
	Runs   Submitter
	Loader *execute.Loader
	Sealer runs.Sealer
	// Audit records registrations and deletions; nil records nothing (tests).
	Audit runs.Auditor
	Log   *slog.Logger     // nil: discard
	Clock func() time.Time // nil: time.Now
}

// Service holds the template use-cases. It is safe for concurrent use.
type Service struct{ deps Deps }

// New returns the template use-cases.
func New(deps Deps) *Service {
	if deps.Clock == nil {
		deps.Clock = time.Now
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{deps: deps}
}

// RegisterRequest is POST /v1/templates.
type RegisterRequest struct {
	ID           string
	Config       []byte
	Pool         string
	PoolOverride pool.Override
	Tenants      []string
	AllTenants   bool
}

// View is a template as the API shows it: its settings and declared params, never its
// config (which may hold credentials).
type View struct {
	ID           string
	Version      int
	Pool         string
	PoolOverride pool.Override
	Tenants      []string
	AllTenants   bool
	Params       []pipeline.Param
	CreatedBy    string
	CreatedAt    time.Time
}

// Register stores a new version of a template (admin). The config must parse, its
// params block must be valid (errors name the param: params.X.type, …) and a directive in
// its SQL query must stand where a value may.
func (s *Service) Register(ctx context.Context, p runs.Principal, req RegisterRequest) (*View, error) {
	if err := admin(p, "register templates"); err != nil {
		return nil, err
	}
	if err := naming.Check("id", req.ID); err != nil {
		return nil, &runs.InvalidRequestError{Field: "id", Message: err.Error()}
	}
	if req.Pool != "" {
		if err := pool.Validate(req.Pool); err != nil {
			return nil, &runs.InvalidRequestError{Field: "pool", Message: err.Error()}
		}
	}
	for i, t := range req.Tenants {
		if err := naming.Check("tenant", t); err != nil {
			return nil, &runs.InvalidRequestError{Field: "tenants[" + strconv.Itoa(i) + "]", Message: err.Error()}
		}
	}
	for i, pl := range req.PoolOverride.Allowed {
		if err := pool.Validate(pl); err != nil {
			return nil, &runs.InvalidRequestError{Field: "pool_override[" + strconv.Itoa(i) + "]", Message: err.Error()}
		}
	}
	if len(req.Config) == 0 {
		return nil, &runs.InvalidRequestError{Field: "config", Message: "is required: give the pipeline as YAML or JSON text, or as a JSON object"}
	}
	root, err := s.deps.Loader.Parse(req.Config)
	if err != nil {
		return nil, err
	}
	params, errs := pipeline.ParseParams(root.Get("params"))
	// A param quoted in the SQL query would never reach it as a value: refuse it now,
	// not at the first run (SPEC §14.2).
	errs = append(errs, execute.CheckSQLPlacement(root, s.deps.Loader.Catalog)...)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	if err := pipeline.CheckSecretPlacement(root); err != nil {
		return nil, err
	}
	t := &Template{
		ID: req.ID, Config: string(req.Config), Pool: req.Pool, PoolOverride: req.PoolOverride,
		Tenants: slices.Clone(req.Tenants), AllTenants: req.AllTenants, CreatedBy: p.Name,
		CreatedAt: s.deps.Clock().UTC(),
	}
	if s.deps.Sealer != nil {
		// Bound to the template id: a ciphertext moved to another template does not open.
		ct, err := s.deps.Sealer.Seal(ctx, t.ID, runs.PurposeTemplate, req.Config)
		if err != nil {
			return nil, fmt.Errorf("seal template %s: %w", t.ID, err)
		}
		t.Config, t.ConfigSealed = base64.StdEncoding.EncodeToString(ct), true
	}
	if err := s.deps.Store.AddTemplate(ctx, t); err != nil {
		return nil, err
	}
	d := map[string]any{"template_id": t.ID, "version": t.Version, "all_tenants": t.AllTenants}
	if len(t.Tenants) > 0 {
		d["tenants"] = slices.Clone(t.Tenants)
	}
	if t.Pool != "" {
		d["pool"] = t.Pool
	}
	s.audit(ctx, p, ActionRegistered, d)
	return view(t, params), nil
}

// Get returns the newest version of a template (viewer). A tenant principal sees only the
// templates that list its tenant; another is not found, so ids cannot be probed.
func (s *Service) Get(ctx context.Context, p runs.Principal, id string) (*View, error) {
	t, err := s.visible(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return s.view(ctx, t)
}

// visible returns the newest version of id to a viewer allowed to see it; a template a
// tenant principal may not run is not found, so its existence does not leak.
func (s *Service) visible(ctx context.Context, p runs.Principal, id string) (*Template, error) {
	if err := viewer(p); err != nil {
		return nil, err
	}
	t, err := s.deps.Store.LatestTemplate(ctx, id)
	if err != nil {
		return nil, err
	}
	if !listed(p, t) {
		return nil, fmt.Errorf("template %s: %w", id, run.ErrNotFound)
	}
	return t, nil
}

// Versions lists every version of a template, newest first, to whoever may Get it: a
// tenant principal sees them only when the newest version lists its tenant (the rule Get
// applies), so another tenant's template stays not found.
func (s *Service) Versions(ctx context.Context, p runs.Principal, id string) ([]Version, error) {
	if _, err := s.visible(ctx, p, id); err != nil {
		return nil, err
	}
	return s.deps.Store.TemplateVersions(ctx, id)
}

// List returns the newest version of every template.
func (s *Service) List(ctx context.Context, p runs.Principal) ([]*View, error) {
	if err := viewer(p); err != nil {
		return nil, err
	}
	ts, err := s.deps.Store.ListTemplates(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*View, 0, len(ts))
	for _, t := range ts {
		if !listed(p, t) {
			continue
		}
		v, err := s.view(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Delete removes every version of a template (admin); ErrInUse while runs wait on it.
func (s *Service) Delete(ctx context.Context, p runs.Principal, id string) error {
	if err := admin(p, "delete templates"); err != nil {
		return err
	}
	if err := s.deps.Store.DeleteTemplate(ctx, id); err != nil {
		return err
	}
	s.audit(ctx, p, ActionDeleted, map[string]any{"template_id": id})
	return nil
}

// RunRequest is POST /v1/templates/{id}/runs (and the tenant route when Tenant is set).
type RunRequest struct {
	Tenant         string
	Params         map[string]string
	Pool           string
	Labels         map[string]string
	IdempotencyKey string
	RunKey         string
	Callback       *runs.Callback
	TriggerKind    run.TriggerKind // "" = template, or tenant when Tenant is set
	// Logical is the run's logical instant (a schedule tick, a backfill window's start);
	// nil = now. Zone is the zone of its run_date; nil = the server's --timezone.
	Logical *time.Time
	Zone    *time.Location
	// Serial queues the run behind active work of its pipeline key (overlap_policy queue);
	// MaxActive lets that many be active at once (a backfill's max_active; 0 = 1).
	Serial    bool
	MaxActive int
	// Backfill is the window of a backfill run.
	Backfill *execute.Window
	// Tick is the schedule tick the run is for (see runs.SubmitRequest).
	Tick *runs.Tick
}

// ownPool reports whether the server itself starts runs of this kind: its schedules and
// backfills choose their pool freely (SPEC §5.2).
func ownPool(kind run.TriggerKind) bool {
	return kind == run.TriggerSchedule || kind == run.TriggerBackfill
}

// Run materializes the newest version of the template with the params and submits it
// through the one funnel, recording {id, version} on the run.
func (s *Service) Run(ctx context.Context, p runs.Principal, id string, req RunRequest) (runs.SubmitResult, error) {
	t, err := s.deps.Store.LatestTemplate(ctx, id)
	if err != nil {
		return runs.SubmitResult{}, err
	}
	return s.run(ctx, p, t, req)
}

func (s *Service) run(ctx context.Context, p runs.Principal, t *Template, req RunRequest) (runs.SubmitResult, error) {
	sub, err := s.submission(ctx, p, t, req)
	if err != nil {
		return runs.SubmitResult{}, err
	}
	return s.deps.Runs.Submit(ctx, sub)
}

// SubmissionRequest is one entry of Submissions: a run of template TemplateID.
type SubmissionRequest struct {
	TemplateID string
	RunRequest
}

// Submissions materializes the newest version of each request's template, as Run does,
// without submitting: out[i] is the submission of reqs[i] for the funnel, or errs[i]
// why it cannot be made. Each template is read once, however many requests name it (a
// burst of schedule ticks is submitted in batches this way).
func (s *Service) Submissions(ctx context.Context, p runs.Principal, reqs []SubmissionRequest) (out []runs.SubmitRequest, errs []error) {
	out, errs = make([]runs.SubmitRequest, len(reqs)), make([]error, len(reqs))
	type latest struct {
		t   *Template
		err error
	}
	read := map[string]latest{}
	for i, r := range reqs {
		l, ok := read[r.TemplateID]
		if !ok {
			l.t, l.err = s.deps.Store.LatestTemplate(ctx, r.TemplateID)
			read[r.TemplateID] = l
		}
		if errs[i] = l.err; l.err == nil {
			out[i], errs[i] = s.submission(ctx, p, l.t, r.RunRequest)
		}
	}
	return out, errs
}

// submission is the funnel request of a run of t.
func (s *Service) submission(ctx context.Context, p runs.Principal, t *Template, req RunRequest) (runs.SubmitRequest, error) {
	if req.Tenant != "" && !t.AllTenants && !slices.Contains(t.Tenants, req.Tenant) {
		return runs.SubmitRequest{}, fmt.Errorf("template %s, tenant %s: %w", t.ID, req.Tenant, ErrTenantNotAllowed)
	}
	text, err := s.open(ctx, t)
	if err != nil {
		return runs.SubmitRequest{}, err
	}
	if req.Pool != "" && !ownPool(req.TriggerKind) {
		cfgPool := ""
		if root, err := s.deps.Loader.Parse(text); err == nil {
			if n := root.Get("pool"); n != nil && n.Kind == pipeline.KindScalar {
				cfgPool = n.Value
			}
		}
		if err := t.PoolOverride.Check(req.Pool, pool.Resolve(t.Pool, cfgPool)); err != nil {
			return runs.SubmitRequest{}, err
		}
	}
	poolName := req.Pool
	if poolName == "" {
		poolName = t.Pool
	}
	kind := req.TriggerKind
	if kind == "" {
		kind = run.TriggerTemplate
		if req.Tenant != "" {
			kind = run.TriggerTenant
		}
	}
	return runs.SubmitRequest{
		Principal: p, TriggerKind: string(kind), Config: text, Labels: req.Labels, Pool: poolName,
		IdempotencyKey: req.IdempotencyKey, RunKey: req.RunKey, Callback: req.Callback,
		Params: req.Params, Tenant: req.Tenant, TemplateID: t.ID, TemplateVersion: t.Version,
		Clock: req.Logical, Zone: req.Zone, Serial: req.Serial, MaxActive: req.MaxActive, Tick: req.Tick,
		Backfill: req.Backfill,
	}, nil
}

// FanoutEntry is one run of a fan-out.
type FanoutEntry struct {
	Params map[string]string
	Labels map[string]string
}

// FanoutResult is the answer for one entry: its run, or why it was refused.
type FanoutResult struct {
	runs.SubmitResult
	Err error
}

// Fanout starts one run per entry (SPEC §8.2). Each entry's idempotency key is derived
// from the whole request and the entry's index, so resending the same fan-out answers
// the same runs instead of starting them again.
func (s *Service) Fanout(ctx context.Context, p runs.Principal, id, poolName string, entries []FanoutEntry) ([]FanoutResult, error) {
	if len(entries) == 0 {
		return nil, &runs.InvalidRequestError{Field: "runs", Message: "give at least one entry {params, labels?}"}
	}
	t, err := s.deps.Store.LatestTemplate(ctx, id)
	if err != nil {
		return nil, err
	}
	digest, err := json.Marshal(struct {
		ID      string        `json:"id"`
		Version int           `json:"version"`
		Pool    string        `json:"pool"`
		Runs    []FanoutEntry `json:"runs"`
	}{t.ID, t.Version, poolName, entries})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(digest)
	base := "fanout:" + hex.EncodeToString(sum[:16])
	out := make([]FanoutResult, 0, len(entries))
	for i, e := range entries {
		res, err := s.run(ctx, p, t, RunRequest{
			Params: e.Params, Labels: e.Labels, Pool: poolName,
			IdempotencyKey: base + ":" + strconv.Itoa(i), TriggerKind: run.TriggerFanout,
		})
		out = append(out, FanoutResult{SubmitResult: res, Err: err})
	}
	return out, nil
}

// open returns a template's config text.
func (s *Service) open(ctx context.Context, t *Template) ([]byte, error) {
	if !t.ConfigSealed {
		return []byte(t.Config), nil
	}
	ct, err := base64.StdEncoding.DecodeString(t.Config)
	if err != nil {
		return nil, fmt.Errorf("the sealed config of template %s is not base64: %w", t.ID, runs.ErrVaultTampered)
	}
	if s.deps.Sealer == nil {
		return nil, fmt.Errorf("template %s is sealed and this server has no --vault-key: %w", t.ID, runs.ErrVaultKeyRequired)
	}
	return s.deps.Sealer.Open(ctx, t.ID, runs.PurposeTemplate, ct)
}

func (s *Service) view(ctx context.Context, t *Template) (*View, error) {
	text, err := s.open(ctx, t)
	if err != nil {
		return nil, err
	}
	var params []pipeline.Param
	if root, err := s.deps.Loader.Parse(text); err == nil {
		params, _ = pipeline.ParseParams(root.Get("params"))
	}
	return view(t, params), nil
}

func view(t *Template, params []pipeline.Param) *View {
	return &View{
		ID: t.ID, Version: t.Version, Pool: t.Pool, PoolOverride: t.PoolOverride,
		Tenants: slices.Clone(t.Tenants), AllTenants: t.AllTenants, Params: params,
		CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt,
	}
}

func admin(p runs.Principal, what string) error {
	if p.Tenant != "" || p.Role != runs.Admin {
		return fmt.Errorf("%w: %s needs the admin role (untenanted); principal %q is %q", runs.ErrForbidden, what, p.Name, p.Role)
	}
	return nil
}

func viewer(p runs.Principal) error {
	if p.Role != runs.Viewer && p.Role != runs.Operator && p.Role != runs.Admin {
		return fmt.Errorf("%w: principal %q has no role", runs.ErrForbidden, p.Name)
	}
	return nil
}

// listed: a tenant principal reads the templates that list its tenant (SPEC §2.2);
// untenanted principals read them all.
func listed(p runs.Principal, t *Template) bool {
	return p.Tenant == "" || t.AllTenants || slices.Contains(t.Tenants, p.Tenant)
}

// CheckParams checks, without running anything, that supplied binds to the params the
// newest version of id declares (errors name the param: params.X), and that secret ones
// can be sealed. Schedules check their params this way once, when they are created.
func (s *Service) CheckParams(ctx context.Context, id string, supplied map[string]string) (*View, error) {
	t, err := s.deps.Store.LatestTemplate(ctx, id)
	if err != nil {
		return nil, err
	}
	text, err := s.open(ctx, t)
	if err != nil {
		return nil, err
	}
	root, err := s.deps.Loader.Parse(text)
	if err != nil {
		return nil, err
	}
	decl, errs := pipeline.ParseParams(root.Get("params"))
	if err := errs.Err(); err != nil {
		return nil, err
	}
	if _, errs := pipeline.BindParams(decl, supplied); errs.Err() != nil {
		return nil, errs.Err()
	}
	for _, p := range decl {
		if _, ok := supplied[p.Name]; ok && p.Secret && s.deps.Sealer == nil {
			return nil, fmt.Errorf("params.%s: %w", p.Name, runs.ErrVaultKeyRequired)
		}
	}
	return view(t, decl), nil
}
