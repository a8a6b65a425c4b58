package execute

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// ErrDirectiveRefused is wrapped by *DirectiveRefusedError: a directive a network-submitted
// config may not use (SPEC §1.2). Transports map it to 422 directive_refused; check it
// before pipeline.ErrInvalidConfig, since a load error can carry both.
var ErrDirectiveRefused = errors.New("directive refused")

// DirectiveRefusedError names a refused directive, where it is and why.
type DirectiveRefusedError struct {
	Path      string
	Pos       pipeline.Pos
	Directive string // as written, e.g. ${env:SLUICE_VAULT_KEY}
	Reason    string
}

func (e *DirectiveRefusedError) Error() string {
	return fmt.Sprintf("%s: %s refused: %s", e.Path, e.Directive, e.Reason)
}

// Is makes errors.Is(err, ErrDirectiveRefused) true.
func (e *DirectiveRefusedError) Is(target error) bool { return target == ErrDirectiveRefused }

// Decoder turns config text into a document tree (the configtext adapter).
type Decoder interface {
	// Decode returns *pipeline.SyntaxError for malformed text and pipeline.Errors for a
	// document a config cannot be (duplicate keys, several documents, a non-map root).
	Decode(text []byte) (*pipeline.Node, error)
}

// Environment is what directives read: this process's environment variables and files.
type Environment interface {
	LookupEnv(name string) (string, bool)
	ReadFile(path string) ([]byte, error)
}

// SymlinkResolver is optionally implemented by an Environment. With it, ${file:} in a
// network-submitted config is also refused when a symlink under an allowed directory
// points outside it; without it only the written path is checked.
type SymlinkResolver interface {
	EvalSymlinks(path string) (string, error)
}

// Redactor learns values that must never be shown (SPEC §1.2, §7.2).
type Redactor interface {
	Register(values ...string)
}

// LoadOptions are the per-load inputs of directive resolution.
type LoadOptions struct {
	BaseDir string            // ${file:} relative paths resolve here
	Params  map[string]string // supplied template params, raw text
	Logical time.Time         // the run's logical instant (${now.*})
	Zone    *time.Location    // run_date zone; nil = UTC
	// RunDate is the stored run_date of the run being executed; when set, ${now.date} is
	// it, so a run whose date was taken in a schedule's zone keeps that date on every member.
	RunDate  string
	Backfill *Window // ${backfill.start|end}; nil makes those directives errors
	// Network marks a config that came over the network (serve): ${env:}/${secret:} of
	// SLUICE_* names are refused, and ${file:} outside AllowFileDirs.
	Network       bool
	AllowFileDirs []string
	// SyntaxOnly checks directives without reading anything (a member that does not serve
	// the run's pool): env, secret and file directives are left in place and marked
	// Deferred; params, now and backfill still resolve, and refusals still apply.
	SyntaxOnly bool
}

// Window is a backfill window.
type Window struct{ Start, End time.Time }

// Loader decodes, resolves and validates configs. Every field but Redactor is required.
type Loader struct {
	Decoder  Decoder
	Env      Environment
	Catalog  pipeline.Catalog
	Redactor Redactor

	parsed parseCache
}

// Parse decodes text without resolving or validating it. The tree is the caller's own
// (see parseCache).
func (l *Loader) Parse(text []byte) (*pipeline.Node, error) {
	if tree := l.parsed.get(text); tree != nil {
		return tree, nil
	}
	tree, err := l.Decoder.Decode(text)
	if err != nil {
		return nil, err
	}
	l.parsed.put(text, tree)
	return tree, nil
}

// Load decodes text, resolves its directives and validates the result. Errors: a
// *pipeline.SyntaxError, pipeline.Errors with every problem (resolution and validation
// together), or — when some directive was refused — an errors.Join of the
// *DirectiveRefusedError values and those pipeline.Errors. FieldErrors flattens any of them.
func (l *Loader) Load(ctx context.Context, text []byte, opts LoadOptions) (*pipeline.Config, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	root, err := l.Parse(text)
	if err != nil {
		return nil, err
	}
	res := l.resolveOwned(root, opts) // Parse's tree is this call's own
	cfg, errs := pipeline.Build(res.root, l.Catalog)
	all := mergeErrors(res.errs, errs)
	if len(res.refused) > 0 || len(all) > 0 {
		return nil, joinLoadErrors(res.refused, all)
	}
	return cfg, nil
}

// Resolve returns a copy of root with its directives resolved, and the declared params.
// Directives are resolved once, in the given text only: a param value or a value read
// from the environment is inserted literally, never parsed again. On error the copy is
// still returned, with the leaves that failed left as written and marked Deferred.
func (l *Loader) Resolve(root *pipeline.Node, opts LoadOptions) (*pipeline.Node, []pipeline.Param, error) {
	res := l.resolve(root, opts)
	if len(res.refused) > 0 || len(res.errs) > 0 {
		return res.root, res.decl, joinLoadErrors(res.refused, res.errs)
	}
	return res.root, res.decl, nil
}

// FieldErrors flattens a Load or Resolve error into one list of path + message, for
// answers that list every problem (details.errors, validate --json). Errors of other
// kinds are left out.
func FieldErrors(err error) pipeline.Errors {
	var out pipeline.Errors
	switch e := err.(type) {
	case nil:
		return nil
	case pipeline.Errors:
		return append(out, e...)
	case *pipeline.SyntaxError:
		return append(out, pipeline.FieldError{Pos: e.Pos, Message: e.Message})
	case *DirectiveRefusedError:
		return append(out, pipeline.FieldError{Path: e.Path, Pos: e.Pos, Message: e.Directive + " refused: " + e.Reason})
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			out = append(out, FieldErrors(inner)...)
		}
		return out
	}
	return FieldErrors(errors.Unwrap(err))
}

func joinLoadErrors(refused []*DirectiveRefusedError, errs pipeline.Errors) error {
	if len(refused) == 0 {
		return errs.Err()
	}
	list := make([]error, 0, len(refused)+1)
	for _, r := range refused {
		list = append(list, r)
	}
	if len(errs) > 0 {
		list = append(list, errs)
	}
	return errors.Join(list...)
}

// mergeErrors appends b to a, dropping exact repeats (the params block is checked by both
// the resolver and Build).
func mergeErrors(a, b pipeline.Errors) pipeline.Errors {
	seen := make(map[pipeline.FieldError]bool, len(a))
	out := make(pipeline.Errors, 0, len(a)+len(b))
	for _, e := range append(append(pipeline.Errors{}, a...), b...) {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// resolution is the state of one Resolve.
type resolution struct {
	l        *Loader
	opts     LoadOptions
	root     *pipeline.Node
	decl     []pipeline.Param
	declared map[string]pipeline.Param
	values   map[string]any
	quiet    map[string]bool // params whose problem is already reported
	errs     pipeline.Errors
	refused  []*DirectiveRefusedError
	// sqlPath is the path of the source's SQL query (its directives become bind
	// parameters) and sqlDialect its dialect; "" when the source takes none.
	sqlPath    string
	sqlDialect pipeline.Dialect
}

func (l *Loader) resolve(root *pipeline.Node, opts LoadOptions) *resolution {
	return l.resolveOwned(root.Clone(), opts)
}

// resolveOwned resolves root in place: the caller's own tree, which nobody else reads (a
// clone per run was 3 % of a busy member's allocation).
func (l *Loader) resolveOwned(root *pipeline.Node, opts LoadOptions) *resolution {
	r := &resolution{l: l, opts: opts, root: root, declared: map[string]pipeline.Param{}, quiet: map[string]bool{}}
	if r.root == nil || r.root.Kind != pipeline.KindMap {
		r.errs = append(r.errs, pipeline.FieldError{Message: "a config must be a map with version, name and pipeline"})
		return r
	}
	r.params()
	r.sqlPath, r.sqlDialect = SQLQueryPath(r.root, l.Catalog)
	for _, f := range r.root.Fields {
		if f.Key == "params" {
			continue
		}
		_ = f.Value.Walk(f.Key, func(path string, leaf *pipeline.Node) error {
			r.leaf(path, leaf)
			return nil
		})
	}
	return r
}

// params reads the params block and binds the supplied values. The block declares; it is
// not data: directives in it are refused (only $${ escapes are undone).
func (r *resolution) params() {
	block := r.root.Get("params")
	_ = block.Walk("params", func(path string, leaf *pipeline.Node) error {
		if leaf.Type != pipeline.TypeString || !strings.Contains(leaf.Value, "${") {
			return nil
		}
		tpl, err := pipeline.ParseTemplate(leaf.Value)
		if err != nil {
			r.fail(path, leaf, "%s", err.Error())
			return nil
		}
		if lit, ok := tpl.Literal(); ok {
			leaf.Value = lit
			return nil
		}
		r.fail(path, leaf, "%s: directives are not resolved in the params block (write $${ for a literal ${)", tpl.Directives()[0].Raw)
		return nil
	})
	decl, errs := pipeline.ParseParams(block)
	r.errs = append(r.errs, errs...)
	r.decl = decl
	if block != nil {
		for _, f := range block.Fields {
			r.quiet[f.Key] = len(errs) > 0 // a broken declaration is reported once, at params
		}
	}
	for _, p := range decl {
		r.declared[p.Name] = p
		r.quiet[p.Name] = false
	}
	values, errs := pipeline.BindParams(decl, r.opts.Params)
	r.errs = append(r.errs, errs...)
	for _, e := range errs {
		r.quiet[strings.TrimPrefix(e.Path, "params.")] = true
	}
	r.values = values
	for _, p := range decl {
		if !p.Secret {
			continue
		}
		raw, supplied := r.opts.Params[p.Name]
		if supplied {
			r.register(raw)
		}
		// The text that lands in the config can differ from what was supplied ("007"
		// becomes 7) or come from the default.
		if v, ok := values[p.Name]; ok && (!supplied || pipeline.ParamText(v) != raw) {
			r.register(pipeline.ParamText(v))
		}
	}
}

func (r *resolution) fail(path string, n *pipeline.Node, format string, a ...any) {
	r.errs = append(r.errs, pipeline.FieldError{Path: path, Pos: n.Pos, Message: fmt.Sprintf(format, a...)})
}

func (r *resolution) register(v string) {
	if v != "" && r.l.Redactor != nil {
		r.l.Redactor.Register(v)
	}
}

// leaf resolves the directives of one scalar in place. A leaf that cannot be resolved is
// left as written and marked Deferred, so validation does not report it a second time.
func (r *resolution) leaf(path string, n *pipeline.Node) {
	if n.Type != pipeline.TypeString || !strings.Contains(n.Value, "${") {
		return
	}
	tpl, err := pipeline.ParseTemplate(n.Value)
	if err != nil {
		r.fail(path, n, "%s", err.Error())
		n.Deferred = true
		return
	}
	if lit, ok := tpl.Literal(); ok {
		n.Value = lit
		return
	}
	sql := path == r.sqlPath
	if sql && !r.placed(path, n) {
		n.Deferred = true
		return
	}
	allowed, needsIO := true, false
	for _, d := range tpl.Directives() {
		if !r.allowed(path, n, d) {
			allowed = false
		}
		needsIO = needsIO || isIO(d.Kind)
	}
	if !allowed {
		n.Deferred = true
		return
	}
	if r.opts.SyntaxOnly && needsIO {
		// Still report what can be known without reading: unknown params, a missing
		// backfill window.
		for _, d := range tpl.Directives() {
			if !isIO(d.Kind) {
				r.value(path, n, d)
			}
		}
		n.Deferred = true
		return
	}
	if sql {
		r.statement(path, n, tpl)
		return
	}
	if d, ok := tpl.Single(); ok && d.Kind == pipeline.DirectiveParam {
		if v, ok := r.param(path, n, d); ok {
			n.Value = pipeline.ParamText(v)
			n.Type = pipeline.ParamScalarType(r.declared[d.Arg].Type)
		} else {
			n.Deferred = true
		}
		return
	}
	var b strings.Builder
	ok := true
	for _, p := range tpl.Parts {
		if p.Directive == nil {
			b.WriteString(p.Literal)
			continue
		}
		s, good := r.value(path, n, *p.Directive)
		ok = ok && good
		b.WriteString(s)
	}
	if !ok {
		n.Deferred = true
		return
	}
	n.Value = b.String()
}

func isIO(k pipeline.DirectiveKind) bool {
	return k == pipeline.DirectiveEnv || k == pipeline.DirectiveSecret || k == pipeline.DirectiveFile
}

// value resolves one directive to text; false means an error was recorded.
func (r *resolution) value(path string, n *pipeline.Node, d pipeline.Directive) (string, bool) {
	switch d.Kind {
	case pipeline.DirectiveEnv, pipeline.DirectiveSecret:
		v, ok := r.l.Env.LookupEnv(d.Arg)
		if !ok {
			r.fail(path, n, "%s is not set", d.Raw)
			return "", false
		}
		r.register(v)
		return v, true
	case pipeline.DirectiveFile:
		return r.file(path, n, d)
	case pipeline.DirectiveParam, pipeline.DirectiveNow, pipeline.DirectiveBackfill:
		v, ok := r.bound(path, n, d)
		return pipeline.ParamText(v), ok
	}
	r.fail(path, n, "%s cannot be resolved", d.Raw)
	return "", false
}

func (r *resolution) file(path string, n *pipeline.Node, d pipeline.Directive) (string, bool) {
	p := r.filePath(d.Arg)
	if r.opts.Network {
		if sr, ok := r.l.Env.(SymlinkResolver); ok {
			if real, err := sr.EvalSymlinks(p); err == nil && !r.underAllowed(real, sr) {
				r.refuse(path, n, d, "the file is a link to a place outside the directories allowed by --allow-file-dir")
				return "", false
			}
		}
	}
	data, err := r.l.Env.ReadFile(p)
	if err != nil {
		r.fail(path, n, "%s cannot be read: %v", d.Raw, err)
		return "", false
	}
	v := strings.TrimSpace(string(data))
	r.register(v)
	return v, true
}

func (r *resolution) filePath(arg string) string {
	if filepath.IsAbs(arg) || r.opts.BaseDir == "" {
		return filepath.Clean(arg)
	}
	return filepath.Join(r.opts.BaseDir, arg)
}

// allowed applies the network refusals (SPEC §1.2); false means one was recorded.
func (r *resolution) allowed(path string, n *pipeline.Node, d pipeline.Directive) bool {
	if !r.opts.Network {
		return true
	}
	switch d.Kind {
	case pipeline.DirectiveEnv, pipeline.DirectiveSecret:
		if strings.HasPrefix(strings.ToUpper(d.Arg), "SLUICE_") {
			r.refuse(path, n, d, "SLUICE_* variables are the server's own settings and never resolve in a config sent over the network")
			return false
		}
	case pipeline.DirectiveFile:
		if len(r.opts.AllowFileDirs) == 0 {
			r.refuse(path, n, d, "files are not readable from a config sent over the network unless serve runs with --allow-file-dir DIR")
			return false
		}
		p := r.filePath(d.Arg)
		if !filepath.IsAbs(p) {
			r.refuse(path, n, d, "use an absolute path under a directory allowed by --allow-file-dir")
			return false
		}
		if !r.underAllowed(p, nil) {
			r.refuse(path, n, d, "the path is outside the directories allowed by --allow-file-dir")
			return false
		}
	}
	return true
}

func (r *resolution) refuse(path string, n *pipeline.Node, d pipeline.Directive, reason string) {
	r.refused = append(r.refused, &DirectiveRefusedError{Path: path, Pos: n.Pos, Directive: d.Raw, Reason: reason})
}

// underAllowed reports whether p lies inside one of AllowFileDirs; with sr, the
// directories' own links are resolved too, so both sides are compared as real paths.
func (r *resolution) underAllowed(p string, sr SymlinkResolver) bool {
	for _, dir := range r.opts.AllowFileDirs {
		dir = filepath.Clean(dir)
		if sr != nil {
			if real, err := sr.EvalSymlinks(dir); err == nil {
				dir = real
			}
		}
		rel, err := filepath.Rel(dir, p)
		if err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}
