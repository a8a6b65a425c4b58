package runs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/naming"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
)

// maxIdempotencyKeyLen bounds idempotency_key like run_key, so it fits an indexed column.
const maxIdempotencyKeyLen = run.MaxRunKeyLen

// Submit is the ONE way a run is created (SPEC §2.3, §4.2): REST, the CLI client, MCP,
// templates, schedules, backfills, approvals and rollbacks all come here, so every run
// gets the same checks. In order:
//
//  1. a draining server refuses (ErrDraining); the principal may submit for the tenant
//     (ErrForbidden); no secret param reaches name, labels, run_key or pool
//     (*pipeline.SecretMisplacedError); the request fields are well formed
//     (ErrInvalidRequest);
//  2. the config loads with the network's restrictions on directives (refusals and
//     config errors pass through with their paths), and a sharded config can run
//     sharded (*pipeline.ShardRefusedError); name, pool (request → config →
//     default) and admission (*pool.UnservedError) are decided, and live members of an
//     older release must be able to run it (*StateFormatRefusedError,
//     *PoolsUnsupportedError);
//  3. the callback passes the address policy for every resolved address
//     (*CallbackRefusedError); the queue has room (ErrQueueFull); a request that must
//     be proposed (SPEC §9.5) becomes a change request here, unless it carries secret
//     params (ErrSecretParamsRefused);
//  4. the run is stored pending (the store makes it queued behind an active sibling of a
//     serial pipeline) with its RAW config text — directives unresolved, because the
//     member that claims it resolves them with its own environment — together with its
//     idempotency key; a replay answers the original run (Replayed), a reused key with
//     another request is ErrIdempotencyConflict, a key whose run was deleted is
//     ErrRunDeleted, an existing run_key answers that run (Replayed);
//  5. the submission is audited and the claim loop woken.
//
// The submission is one span (SPEC §14.6); the run stores its traceparent, so the spans
// of its execution join the submitter's trace on whichever member claims it.
func (s *Service) Submit(ctx context.Context, req SubmitRequest) (SubmitResult, error) {
	ctx, span := s.deps.Tracer.Start(ctx, "submit", execute.A("trigger_kind", req.TriggerKind))
	defer span.End()
	res, err := s.submit(ctx, span, req)
	switch {
	case err != nil:
		span.Fail(s.deps.Redactor.Redact(err.Error()))
	case res.RunID != "":
		span.SetAttrs(execute.A("run_id", res.RunID), execute.A("status", res.Status),
			execute.A("replayed", res.Replayed))
	case res.ChangeRequestID != "":
		span.SetAttrs(execute.A("change_request_id", res.ChangeRequestID))
	}
	return res, err
}

func (s *Service) submit(ctx context.Context, span execute.Span, req SubmitRequest) (SubmitResult, error) {
	b, res, err := s.build(ctx, span, req)
	if err != nil || b == nil {
		return res, err
	}
	defer b.release()
	var cr CreateResult
	if req.Tick != nil {
		cr, err = s.deps.Store.CreateTick(ctx, b.rec, *req.Tick)
	} else {
		cr, err = s.deps.Store.Create(ctx, b.rec, b.idem)
	}
	if err != nil {
		return SubmitResult{}, err
	}
	return s.stored(ctx, b, cr)
}

// built is a submission that passed every check, ready to store.
type built struct {
	req     SubmitRequest
	rec     *Record
	idem    *Idempotency
	fp      string
	release func() // the queue admission: call once the store answered
}

// build runs the checks of steps 1–3 and builds the record to store. A request that
// became a change request answers with b == nil and its result.
func (s *Service) build(ctx context.Context, span execute.Span, req SubmitRequest) (b *built, res SubmitResult, err error) {
	if s.draining() {
		return nil, SubmitResult{}, ErrDraining
	}
	if err := canSubmit(req.Principal, req.Tenant); err != nil {
		return nil, SubmitResult{}, err
	}
	if len(req.Config) == 0 {
		return nil, SubmitResult{}, invalid("config", "is required: give the pipeline as YAML or JSON text, or as a JSON object")
	}
	// Placement is checked first: the refusals of a malformed name would quote the
	// secret it holds.
	tree, err := s.deps.Loader.Parse(req.Config)
	if err != nil {
		return nil, SubmitResult{}, err
	}
	if err := checkSecretPlacement(tree, req); err != nil {
		return nil, SubmitResult{}, err
	}
	if err := checkSubmitFields(req); err != nil {
		return nil, SubmitResult{}, err
	}
	now := s.now()
	logical := now
	if req.Clock != nil {
		logical = req.Clock.UTC()
	}

	zone := s.cfg.Zone
	if req.Zone != nil {
		zone = req.Zone
	}
	cfg, poolName, err := s.load(ctx, req, logical, zone)
	if err != nil {
		return nil, SubmitResult{}, err
	}
	if r := pipeline.ShardRefusal(cfg, s.deps.Loader.Catalog); r != nil {
		return nil, SubmitResult{}, r
	}
	retry, err := retryPolicy(req, cfg)
	if err != nil {
		return nil, SubmitResult{}, err
	}
	name := req.Name
	if name == "" {
		name = cfg.Name
	}
	if err := naming.Check("name", name); err != nil {
		return nil, SubmitResult{}, invalid("name", err.Error()+"; set name in the config or in the request")
	}
	span.SetAttrs(execute.A("pipeline", name), execute.A("pool", poolName))

	cb, err := s.checkCallback(ctx, req.Callback)
	if err != nil {
		return nil, SubmitResult{}, err
	}
	propose := s.mustPropose(req)
	admitted := admission{release: func() {}} // limit > 0: the store decides admission with the insert
	if !propose {
		if admitted, err = s.queue.admit(ctx); err != nil {
			return nil, SubmitResult{}, err
		}
		// Held until the store answered; released here only when the checks refuse.
		defer func() {
			if b == nil {
				admitted.release()
			}
		}()
	}

	mat, err := s.materialize(tree, req.Params, req.Backfill)
	if err != nil {
		return nil, SubmitResult{}, err
	}
	if propose && len(mat.secrets) > 0 {
		return nil, SubmitResult{}, ErrSecretParamsRefused
	}
	if propose {
		res, err := s.propose(ctx, req, name, poolName)
		return nil, res, err
	}
	fpReq := req
	fpReq.Params = secretFree(tree, req.Params)
	fp, err := fingerprint(tree.CanonicalJSON(), fpReq, cb)
	if err != nil {
		return nil, SubmitResult{}, fmt.Errorf("fingerprint of the request: %w", err)
	}

	id, err := s.newID(now)
	if err != nil {
		return nil, SubmitResult{}, fmt.Errorf("new run id: %w", err)
	}
	maxAttempts := s.cfg.MaxAttempts
	if retry != nil {
		// The reclaim cap counts every claim, retries included: a run allowed more
		// attempts by its policy must not be poisoned by the retries it was granted.
		maxAttempts = max(maxAttempts, retry.MaxAttempts)
	}
	// run.New holds the rules every new run obeys; the record is built from the run it
	// returned, so what is stored is what the domain accepted. The store may still queue
	// it (admission is decided under the pipeline key's lock).
	r, err := run.New(run.NewParams{
		ID: id, Name: name, Pool: poolName, Tenant: req.Tenant, Labels: req.Labels,
		TriggerKind: run.TriggerKind(req.TriggerKind), RunKey: req.RunKey,
		MaxAttempts: maxAttempts, CreatedAt: now, Retry: retry,
	})
	if err != nil {
		return nil, SubmitResult{}, invalid("", err.Error())
	}
	rec := &Record{
		ID:              r.ID(),
		Name:            r.Name(),
		Tenant:          r.Tenant(),
		Pool:            r.Pool(),
		Status:          string(r.Status()),
		Labels:          r.Labels(),
		TriggerKind:     string(r.TriggerKind()),
		RunKey:          r.RunKey(),
		RunDate:         logical.In(zone).Format(time.DateOnly),
		LogicalAt:       logical,
		Serial:          req.Serial || cfg.Replication.Type == pipeline.Incremental,
		MaxActive:       max(req.MaxActive, 1),
		MaxAttempts:     r.MaxAttempts(),
		TimeoutSecs:     req.TimeoutSecs,
		Retry:           r.Retry(),
		Config:          string(req.Config),
		Callback:        cb,
		QueueLimit:      admitted.limit,
		QueueInFlight:   admitted.inFlight,
		TemplateID:      req.TemplateID,
		TemplateVersion: req.TemplateVersion,
		ShardCount:      max(cfg.ShardCount, 1),
		Traceparent:     s.deps.Tracer.Traceparent(ctx),
		CreatedAt:       r.CreatedAt(),
	}
	if mat.text != "" {
		rec.Config = mat.text
	}
	if err := s.seal(ctx, rec, mat.secrets); err != nil {
		return nil, SubmitResult{}, err
	}
	var idem *Idempotency
	if req.IdempotencyKey != "" {
		idem = &Idempotency{Scope: idempotencyScope(req), Key: req.IdempotencyKey, Fingerprint: fp}
	}
	rec.Audit = s.submitAudit(req, id, rec, false)
	return &built{req: req, rec: rec, idem: idem, fp: fp, release: admitted.release}, SubmitResult{}, nil
}

// stored answers a built submission once the store answered cr (step 5).
func (s *Service) stored(ctx context.Context, b *built, cr CreateResult) (SubmitResult, error) {
	if cr.Skipped != "" {
		return SubmitResult{Skipped: cr.Skipped}, nil
	}
	if !cr.Created {
		return s.replay(ctx, b.req, cr, b.fp)
	}
	b.rec.Status = cr.Status // the store may have made it queued
	if s.deps.Waker != nil {
		s.deps.Waker.Wake()
	}
	req := b.req
	s.deps.Log.InfoContext(ctx, "run submitted", "run_id", cr.RunID, "pipeline", b.rec.Name, "pool", b.rec.Pool,
		"tenant", req.Tenant, "trigger_kind", req.TriggerKind, "status", cr.Status)
	return SubmitResult{RunID: cr.RunID, Status: cr.Status}, nil
}

// replay answers a submission the store did not create: an idempotency key seen before
// (its fingerprint is set) or an existing run_key (it is not).
func (s *Service) replay(ctx context.Context, req SubmitRequest, res CreateResult, fp string) (SubmitResult, error) {
	if res.Fingerprint != "" {
		if res.Fingerprint != fp {
			return SubmitResult{}, ErrIdempotencyConflict
		}
		if res.RunDeleted {
			return SubmitResult{}, ErrRunDeleted
		}
	}
	s.writeAudit(ctx, *s.submitAudit(req, res.RunID, nil, true))
	return SubmitResult{RunID: res.RunID, Status: res.Status, Replayed: true}, nil
}

// submitAudit is the audit entry of a submission; a new run's is written by the store
// with the run (Record.Audit), which fills in the status it stored.
func (s *Service) submitAudit(req SubmitRequest, id string, rec *Record, replayed bool) *AuditEntry {
	d := map[string]any{
		"trigger_kind": req.TriggerKind,
		"replayed":     replayed,
	}
	if rec != nil {
		d["name"], d["pool"] = rec.Name, rec.Pool
		if len(rec.Labels) > 0 {
			d["labels"] = rec.Labels
		}
	}
	for k, v := range map[string]string{
		"tenant": req.Tenant, "run_key": req.RunKey, "idempotency_key": req.IdempotencyKey,
		"rollback_of": req.RollbackOf, "template_id": req.TemplateID,
	} {
		if v != "" {
			d[k] = v
		}
	}
	e := s.auditEntry(req.Principal, ActionSubmitted, id, d)
	return &e
}

// idempotencyScope keys idempotency per tenant, or per principal when untenanted (SPEC
// §2.4). Names cannot hold ':', so the two kinds of scope never collide.
func idempotencyScope(req SubmitRequest) string {
	if req.Tenant != "" {
		return req.Tenant
	}
	return "principal:" + req.Principal.Name
}

// retryPolicy is the run's retry policy: the request's, else the config's retry block,
// else none (SPEC §14.5).
func retryPolicy(req SubmitRequest, cfg *pipeline.Config) (*run.Retry, error) {
	if req.Retry == nil {
		return cfg.Retry, nil
	}
	p, err := req.Retry.Policy()
	if err != nil {
		field, msg, _ := strings.Cut(err.Error(), " ")
		return nil, invalid(field, msg)
	}
	return p, nil
}

// checkSubmitFields checks the request fields that need no config.
func checkSubmitFields(req SubmitRequest) error {
	if _, err := run.ParseTriggerKind(req.TriggerKind); err != nil {
		return invalid("trigger_kind", err.Error())
	}
	if req.Name != "" && !naming.Valid(req.Name) {
		return invalid("name", naming.Check("name", req.Name).Error())
	}
	if req.Pool != "" && !naming.Valid(req.Pool) {
		return invalid("pool", naming.Check("pool", req.Pool).Error())
	}
	if req.Tenant != "" && !naming.Valid(req.Tenant) {
		return invalid("tenant", naming.Check("tenant", req.Tenant).Error())
	}
	if err := run.CheckLabels(req.Labels, run.MaxLabels); err != nil {
		return invalid("labels", err.Error())
	}
	if req.TimeoutSecs < 0 {
		return invalid("timeout_secs", fmt.Sprintf("must be 0 (none) or a positive number of seconds (got %d)", req.TimeoutSecs))
	}
	if err := checkKey("run_key", req.RunKey); err != nil {
		return err
	}
	return checkKey("idempotency_key", req.IdempotencyKey)
}

func checkKey(field, k string) error {
	if len(k) > run.MaxRunKeyLen {
		return invalid(field, fmt.Sprintf("is %d bytes long: at most %d are allowed", len(k), run.MaxRunKeyLen))
	}
	if p := naming.TextProblem(k); p != "" {
		return invalid(field, p)
	}
	for _, c := range k {
		if !unicode.IsPrint(c) {
			return invalid(field, "must not contain control characters")
		}
	}
	return nil
}

// load loads the config and decides its pool (request → config → default) and
// admission. Directives that read this process's environment (env, secret, file) are
// resolved only when this server serves the run's pool (SPEC §4.2): a member that does
// not could lack the environment the claimer has, so it checks their syntax and
// refusals only. The first pass is therefore syntax-only; a config whose pool itself
// comes from such a directive is resolved to learn it.
func (s *Service) load(ctx context.Context, req SubmitRequest, logical time.Time, zone *time.Location) (*pipeline.Config, string, error) {
	opts := execute.LoadOptions{
		Params:        req.Params,
		Logical:       logical,
		Zone:          zone,
		Backfill:      req.Backfill,
		Network:       true,
		AllowFileDirs: s.cfg.AllowFileDirs,
		SyntaxOnly:    true,
	}
	cfg, err := s.deps.Loader.Load(ctx, req.Config, opts)
	if err != nil {
		return nil, "", err
	}
	resolved := false
	if req.Pool == "" && cfg.Pool != "" && !naming.Valid(cfg.Pool) {
		opts.SyntaxOnly = false
		if cfg, err = s.deps.Loader.Load(ctx, req.Config, opts); err != nil {
			return nil, "", err
		}
		resolved = true
	}
	poolName := pool.Resolve(req.Pool, cfg.Pool)
	served, err := s.deps.Admission.Served(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("pools served: %w", err)
	}
	if err := pool.Admit(poolName, served); err != nil {
		return nil, "", err
	}
	if !resolved && slices.Contains(s.cfg.Pools, poolName) {
		opts.SyntaxOnly = false
		if cfg, err = s.deps.Loader.Load(ctx, req.Config, opts); err != nil {
			return nil, "", err
		}
	}
	if s.deps.Capabilities != nil {
		if err := s.deps.Capabilities.Check(ctx, NeedOf(cfg, poolName)); err != nil {
			return nil, "", err
		}
	}
	if s.deps.Confinement != nil {
		if err := s.deps.Confinement.CheckTargets(ctx, cfg); err != nil {
			return nil, "", err
		}
	}
	return cfg, poolName, nil
}
