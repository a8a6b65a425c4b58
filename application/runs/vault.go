package runs

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/secret"
)

// ErrVaultKeyRequired: a run with secret params was submitted to a server started without
// a vault key (vault_key_required, 422, SPEC §7.4). Without a key the values could only be
// stored in clear text, so the run is refused instead.
var ErrVaultKeyRequired = errors.New("secret params need a vault key: start the server with --vault-key (SLUICE_VAULT_KEY; `sluice keygen` prints one)")

// materialized is a config with its template params bound: what a run stores.
type materialized struct {
	text    string   // the config to store (before whole-config sealing)
	secrets []string // the N-th value of each ${sealed:N} token, as it sits in text
	tree    *pipeline.Node
}

// materialize binds the supplied params into the config (SPEC §7.2, §8.1), and a
// backfill's window bounds (SPEC §9.4). A request that supplies neither is stored as
// submitted. One that does is stored with every ${param.X} (and ${backfill.start|end})
// replaced by its value — without its params block when params were supplied — so the
// claiming member loads it without the request; other directives (env, file, now, …)
// stay as written because the claimer resolves them with its own environment. The
// source's SQL query is the exception: its values are bind parameters, never text (SPEC
// §14.2), so its directives stay and the values travel as the defaults of a kept params
// block (see bindSQL). Every occurrence of a supplied secret value is then replaced by a
// ${sealed:N} token, so the stored text holds tokens only. The text is JSON (valid YAML
// too), written from the tree so no quoting can hide a value from the tokenizer. The
// params were checked by the load that came before.
func (s *Service) materialize(root *pipeline.Node, supplied map[string]string, window *execute.Window) (materialized, error) {
	block := root.Get("params")
	bindParams := block != nil && len(supplied) > 0
	if !bindParams && window == nil {
		// Without supplied values the claimer resolves the defaults itself.
		return materialized{tree: root}, nil
	}
	values := map[string]any{}
	var decl []pipeline.Param
	var secrets, names []string
	if bindParams {
		var errs pipeline.Errors
		decl, errs = pipeline.ParseParams(block)
		if err := errs.Err(); err != nil {
			return materialized{}, err
		}
		if values, errs = pipeline.BindParams(decl, supplied); errs.Err() != nil {
			return materialized{}, errs.Err()
		}
		for _, p := range decl {
			if !p.Secret {
				continue
			}
			if _, ok := supplied[p.Name]; !ok {
				continue // a default is part of the config text: it was never secret
			}
			if v, ok := values[p.Name]; ok {
				secrets = append(secrets, escapeDollar(pipeline.ParamText(v)))
				names = append(names, p.Name)
			}
		}
	}
	if len(secrets) > 0 && s.deps.Sealer == nil {
		return materialized{}, ErrVaultKeyRequired
	}
	for i, v := range secrets {
		if len([]rune(v)) < secret.MinLen {
			return materialized{}, fmt.Errorf("params.%s: %w: a secret param must be at least %d characters long",
				names[i], secret.ErrTooShort, secret.MinLen)
		}
	}
	tree := root.Clone()
	b := binding{values: values, decl: decl, window: window, params: bindParams}
	b.sqlPath, _ = execute.SQLQueryPath(tree, s.deps.Loader.Catalog)
	var failed error
	_ = tree.Walk("", func(path string, n *pipeline.Node) error {
		if failed != nil || n.Kind != pipeline.KindScalar || n.Type != pipeline.TypeString || path == "params" ||
			strings.HasPrefix(path, "params.") {
			return nil
		}
		if err := b.leaf(path, n); err != nil {
			failed = err
		}
		return nil
	})
	if failed != nil {
		return materialized{}, failed
	}
	b.paramsBlock(tree)
	if len(secrets) > 0 {
		_ = tree.Walk("", func(_ string, n *pipeline.Node) error {
			if failed != nil || n.Kind != pipeline.KindScalar || n.Type != pipeline.TypeString {
				return nil
			}
			out, err := secret.Tokenize(n.Value, secrets)
			if err != nil {
				failed = err
				return nil
			}
			n.Value = out
			return nil
		})
	}
	if failed != nil {
		return materialized{}, failed
	}
	var buf bytes.Buffer
	writeNode(&buf, tree, "")
	buf.WriteByte('\n')
	return materialized{text: buf.String(), secrets: secrets, tree: tree}, nil
}

// binding is what materialize writes into the config: bound params (when params is
// set) and a backfill window (when window is set).
type binding struct {
	values map[string]any
	decl   []pipeline.Param
	window *execute.Window
	params bool
	// sqlPath is the source's SQL query, whose values stay bind parameters; sqlParams
	// and sqlWindow record that it uses params or the window, so the stored params
	// block must carry them.
	sqlPath   string
	sqlParams bool
	sqlWindow map[string]string // backfill bound (start|end) → the param carrying it
}

// value is the text a directive is bound to; ok=false leaves it for the claimer.
func (b binding) value(d pipeline.Directive) (string, pipeline.ScalarType, bool) {
	switch {
	case d.Kind == pipeline.DirectiveParam && b.params:
		if v, ok := b.values[d.Arg]; ok {
			return pipeline.ParamText(v), pipeline.ParamScalarType(b.paramType(d.Arg)), true
		}
	case d.Kind == pipeline.DirectiveBackfill && b.window != nil:
		return b.windowText(d.Arg), pipeline.TypeString, true
	}
	return "", pipeline.TypeString, false
}

func (b binding) windowText(bound string) string {
	t := b.window.Start
	if bound == pipeline.BackfillEnd {
		t = b.window.End
	}
	return t.UTC().Format(time.RFC3339)
}

func (b binding) paramType(name string) pipeline.ParamType {
	for _, p := range b.decl {
		if p.Name == name {
			return p.Type
		}
	}
	return pipeline.ParamString
}

// leaf replaces the bound directives of one string scalar by their values. The literal
// parts and the values are written back with ${ escaped, so the claimer's loader reads
// them as text, never as directives.
func (b *binding) leaf(path string, n *pipeline.Node) error {
	if !strings.Contains(n.Value, "${") {
		return nil
	}
	tpl, err := pipeline.ParseTemplate(n.Value)
	if err != nil {
		return err
	}
	if path == b.sqlPath {
		n.Value = b.bindSQL(tpl)
		return nil
	}
	if d, ok := tpl.Single(); ok {
		if v, typ, ok := b.value(d); ok {
			n.Value, n.Type = escapeDollar(v), typ
		}
		return nil
	}
	var out strings.Builder
	for _, p := range tpl.Parts {
		if p.Directive == nil {
			out.WriteString(escapeDollar(p.Literal))
			continue
		}
		if v, _, ok := b.value(*p.Directive); ok {
			out.WriteString(escapeDollar(v))
		} else {
			out.WriteString(p.Directive.Raw)
		}
	}
	n.Value = out.String()
	return nil
}

func escapeDollar(s string) string { return strings.ReplaceAll(s, "${", "$${") }

// seal seals a new run's stored parts bound to its id (SPEC §7.3): the whole config and
// each secret value. Without a sealer nothing is sealed (materialize already refused
// secrets then).
func (s *Service) seal(ctx context.Context, rec *Record, secrets []string) error {
	if s.deps.Sealer == nil {
		return nil
	}
	ct, err := s.deps.Sealer.Seal(ctx, rec.ID, PurposeConfig, []byte(rec.Config))
	if err != nil {
		return fmt.Errorf("seal the config of run %s: %w", rec.ID, err)
	}
	rec.Config, rec.ConfigSealed = base64.StdEncoding.EncodeToString(ct), true
	if rec.Callback != nil {
		plain, err := json.Marshal(rec.Callback)
		if err != nil {
			return fmt.Errorf("encode the callback of run %s: %w", rec.ID, err)
		}
		ct, err := s.deps.Sealer.Seal(ctx, rec.ID, PurposeCallback, plain)
		if err != nil {
			return fmt.Errorf("seal the callback of run %s: %w", rec.ID, err)
		}
		rec.Callback = &Callback{Sealed: base64.StdEncoding.EncodeToString(ct)}
	}
	for i, v := range secrets {
		ct, err := s.deps.Sealer.Seal(ctx, rec.ID, SecretPurpose(i), []byte(v))
		if err != nil {
			return fmt.Errorf("seal secret %d of run %s: %w", i, rec.ID, err)
		}
		rec.Secrets = append(rec.Secrets, ct)
	}
	return nil
}

// openConfig returns a stored config in clear text (still with its ${sealed:N} tokens).
func (s *Service) openConfig(ctx context.Context, rec *Record) (string, error) {
	return OpenConfig(ctx, s.deps.Sealer, rec.ID, rec.Config, rec.ConfigSealed)
}

// OpenConfig opens a run's stored config when it is sealed; a config stored in clear text
// comes back as is. A sealed config and no sealer is a *VaultKeyMissingError (the key id
// unknown: this member has no key at all).
func OpenConfig(ctx context.Context, sealer Sealer, runID, stored string, sealed bool) (string, error) {
	if !sealed {
		return stored, nil
	}
	ct, err := base64.StdEncoding.DecodeString(stored)
	if err != nil {
		return "", fmt.Errorf("the sealed config of run %s is not base64: %w", runID, ErrVaultTampered)
	}
	if sealer == nil {
		return "", &VaultKeyMissingError{KeyID: "(unknown: this member has no vault key)"}
	}
	pt, err := sealer.Open(ctx, runID, PurposeConfig, ct)
	if err != nil {
		return "", err
	}
	return string(pt), nil
}

// SecretRegistry learns opened secret values so logs and errors mask them.
type SecretRegistry interface {
	Register(values ...string)
}

// OpenRun is what the claiming member (or a shard worker) loads: the stored config opened
// and its ${sealed:N} tokens restored from the run's sealed secrets, each registered with
// reg first (SPEC §7.2). Failures are *VaultKeyMissingError, ErrVaultTampered or
// secret.ErrUnknownToken; the tokens are never run.
func OpenRun(ctx context.Context, sealer Sealer, reg SecretRegistry, runID, stored string, sealed bool, secrets [][]byte) (string, error) {
	text, err := OpenConfig(ctx, sealer, runID, stored, sealed)
	if err != nil {
		return "", err
	}
	if !strings.Contains(text, "${sealed:") {
		return text, nil
	}
	values := make([]string, 0, len(secrets))
	for i, ct := range secrets {
		if sealer == nil {
			return "", &VaultKeyMissingError{KeyID: "(unknown: this member has no vault key)"}
		}
		pt, err := sealer.Open(ctx, runID, SecretPurpose(i), ct)
		if err != nil {
			return "", err
		}
		v := string(pt)
		if reg != nil {
			reg.Register(v, strings.ReplaceAll(v, "$${", "${"))
		}
		values = append(values, jsonEscape(v))
	}
	return secret.Restore(text, values)
}

// jsonEscape is v as it sits inside a JSON string: the stored config is JSON.
func jsonEscape(v string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	out := b.String()
	return out[1 : len(out)-2] // drop the quotes and the newline
}

// secretFree drops the supplied secret params from what the fingerprint covers: replays
// compare the tokenized config (SPEC §7.5), and no digest of a secret is kept.
func secretFree(root *pipeline.Node, params map[string]string) map[string]string {
	block := root.Get("params")
	if block == nil || len(params) == 0 {
		return params
	}
	decl, _ := pipeline.ParseParams(block)
	out := maps.Clone(params)
	for _, p := range decl {
		if p.Secret {
			delete(out, p.Name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// OpenCallback returns a run's callback settings in clear: cb itself unless it is sealed.
func OpenCallback(ctx context.Context, sealer Sealer, runID string, cb *Callback) (*Callback, error) {
	if cb == nil || cb.Sealed == "" {
		return cb, nil
	}
	ct, err := base64.StdEncoding.DecodeString(cb.Sealed)
	if err != nil {
		return nil, fmt.Errorf("the sealed callback of run %s is not base64: %w", runID, ErrVaultTampered)
	}
	if sealer == nil {
		return nil, &VaultKeyMissingError{KeyID: "(unknown: this member has no vault key)"}
	}
	plain, err := sealer.Open(ctx, runID, PurposeCallback, ct)
	if err != nil {
		return nil, err
	}
	var out Callback
	if err := json.Unmarshal(plain, &out); err != nil {
		return nil, fmt.Errorf("the sealed callback of run %s is not JSON: %w", runID, ErrVaultTampered)
	}
	return &out, nil
}

// CallbackBuilderFor is CallbackPayload for runs whose callback settings may be sealed:
// it opens them with sealer first, and with a vault key seals the outbox row it builds
// (URL and payload, SPEC §14.1). A callback that does not open or seal is not sent —
// there is no address to send it to, and clear text may not be stored — and the run's
// own status already tells what happened.
func CallbackBuilderFor(sealer Sealer) CallbackBuilder {
	return func(in CallbackInput) (string, []byte, bool) {
		cb, err := OpenCallback(context.Background(), sealer, in.RunID, in.Callback)
		if err != nil {
			return "", nil, false
		}
		in.Callback = cb
		url, payload, ok := CallbackPayload(in)
		if !ok {
			return "", nil, false
		}
		if url, payload, err = sealOutbox(sealer, in.RunID, url, payload); err != nil {
			return "", nil, false
		}
		return url, payload, true
	}
}
