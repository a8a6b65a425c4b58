package bootstrap

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/adapters/cli"
	apihttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/naming"
)

// authChoice is how the API authenticates (SPEC §2.2): exactly one of a token, a
// principal file or no auth; Generate means none was given, so serve keeps a generated
// token in the data directory.
type authChoice struct {
	Token      string
	Principals []apihttp.Principal
	Disabled   bool
	Generate   bool
	// TokenFile is where the generated token lives (set by ensureToken).
	TokenFile string
}

// config is what the HTTP adapter is given.
func (a authChoice) config() apihttp.AuthConfig {
	return apihttp.AuthConfig{Token: a.Token, Principals: a.Principals, Disabled: a.Disabled}
}

// secrets are the values no log line may show.
func (a authChoice) secrets() []string {
	out := []string{a.Token}
	for _, p := range a.Principals {
		out = append(out, p.Token)
	}
	return out
}

// auth reads the three auth flags; more than one of them is a usage error.
func (f *serveFlags) auth() (authChoice, error) {
	var given []string
	if f.authToken != "" {
		given = append(given, "--auth-token")
	}
	if f.authConfig != "" {
		given = append(given, "--auth-config")
	}
	if f.noAuth {
		given = append(given, "--no-auth")
	}
	switch {
	case len(given) > 1:
		return authChoice{}, fmt.Errorf("invalid value for %s: %s are exclusive, choose one", given[0], strings.Join(given, " and "))
	case f.noAuth:
		return authChoice{Disabled: true}, nil
	case f.authToken != "":
		if strings.TrimSpace(f.authToken) != f.authToken {
			return authChoice{}, errors.New("invalid value for --auth-token: leading or trailing spaces")
		}
		return authChoice{Token: f.authToken}, nil
	case f.authConfig != "":
		ps, err := readPrincipals(f.authConfig)
		if err != nil {
			return authChoice{}, err
		}
		return authChoice{Principals: ps}, nil
	}
	return authChoice{Generate: true}, nil
}

// principalEntry is one entry of --auth-config.
type principalEntry struct {
	Name   string `yaml:"name"`
	Token  string `yaml:"token"`
	Role   string `yaml:"role"`
	Tenant string `yaml:"tenant"`
}

// readPrincipals reads --auth-config: a YAML or JSON list of principals. Unknown keys
// are refused, so a misspelt "tenant" cannot silently widen a principal's reach.
func readPrincipals(path string) ([]apihttp.Principal, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("invalid value for --auth-config: %w", err)
	}
	entries, err := decodePrincipals(data)
	if err != nil {
		return nil, fmt.Errorf("invalid value for --auth-config: %s: %w", path, err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("invalid value for --auth-config: %s lists no principals", path)
	}
	out := make([]apihttp.Principal, len(entries))
	var errs []error
	for i, e := range entries {
		out[i] = apihttp.Principal{Name: e.Name, Token: e.Token, Role: runs.Role(e.Role), Tenant: e.Tenant}
		if e.Tenant != "" {
			if err := naming.Check("tenant", e.Tenant); err != nil {
				errs = append(errs, fmt.Errorf("--auth-config principal %d (%q): %w", i+1, e.Name, err))
			}
		}
	}
	if err := (apihttp.AuthConfig{Principals: out}).Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("invalid value for --auth-config %s: %w", path, err)
	}
	return out, nil
}

// principalsFile is the wrapped form of --auth-config, `principals: [...]`, which reads
// better next to other settings than a bare list.
type principalsFile struct {
	Principals []principalEntry `yaml:"principals"`
}

// decodePrincipals accepts a list of principals or a mapping whose only key is
// `principals`; any other shape is described in the file's own words (what was found on
// which line), never as a Go type.
func decodePrincipals(data []byte) ([]principalEntry, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %s", yamlProblem(err))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, errors.New("the file is empty: want a list of principals ({name, token, role, tenant}) or `principals:` with that list")
	}
	top := doc.Content[0]
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var entries []principalEntry
	switch {
	case top.Kind == yaml.SequenceNode:
		if err := dec.Decode(&entries); err != nil {
			// yaml messages quote the offending line, which may hold a token: keep only
			// what is not a value.
			return nil, fmt.Errorf("each principal is {name, token, role, tenant}: %s", yamlProblem(err))
		}
	case top.Kind == yaml.MappingNode && hasOnlyKey(top, "principals"):
		var wrapped principalsFile
		if err := dec.Decode(&wrapped); err != nil {
			return nil, fmt.Errorf("`principals:` must be a list of {name, token, role, tenant}: %s", yamlProblem(err))
		}
		entries = wrapped.Principals
	case top.Kind == yaml.MappingNode:
		return nil, fmt.Errorf("line %d: found a mapping with keys %s; want a list of principals, or `principals:` as the only key",
			top.Line, strings.Join(mappingKeys(top), ", "))
	default:
		return nil, fmt.Errorf("line %d: found a single value; want a list of principals ({name, token, role, tenant}) or `principals:` with that list",
			top.Line)
	}
	return entries, nil
}

func hasOnlyKey(m *yaml.Node, key string) bool {
	return len(m.Content) == 2 && m.Content[0].Value == key
}

// mappingKeys lists the keys of a mapping; keys are names, never secret values.
func mappingKeys(m *yaml.Node) []string {
	keys := make([]string, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		keys = append(keys, strconv.Quote(m.Content[i].Value))
	}
	return keys
}

// yamlProblem keeps the line numbers and field names of a yaml error, not the values.
func yamlProblem(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var parts []string
		for _, e := range te.Errors {
			if i := strings.Index(e, " `"); i > 0 {
				e = e[:i] + " (value not shown)"
			}
			parts = append(parts, inFileWords(e))
		}
		return strings.Join(parts, "; ")
	}
	msg := err.Error()
	if i := strings.Index(msg, ": "); strings.HasPrefix(msg, "yaml: line") && i > 0 {
		return msg[:i] + ": syntax error"
	}
	return "syntax error"
}

// yamlKinds names yaml's tags the way the file shows them.
var yamlKinds = map[string]string{"!!map": "a mapping", "!!seq": "a list", "!!str": "a string",
	"!!int": "a number", "!!float": "a number", "!!bool": "a boolean", "!!null": "nothing"}

// inFileWords rewrites yaml's Go-typed messages ("cannot unmarshal !!map into
// []bootstrap.principalEntry", "field x not found in type bootstrap.principalEntry") into
// what the file's author sees: what was found, and which key is unknown.
func inFileWords(e string) string {
	if head, rest, ok := strings.Cut(e, "cannot unmarshal "); ok {
		tag, into, _ := strings.Cut(rest, " into ")
		found := yamlKinds[tag]
		if found == "" {
			found = "a value"
		}
		want := "a value of another kind"
		switch {
		case strings.HasPrefix(into, "[]"):
			want = "a list"
		case strings.Contains(into, "."):
			want = "a mapping {name, token, role, tenant}"
		case into == "string":
			want = "a string"
		}
		return head + "found " + found + " where " + want + " belongs"
	}
	if head, rest, ok := strings.Cut(e, "field "); ok {
		if name, _, ok := strings.Cut(rest, " not found in type"); ok {
			return head + "unknown key " + strconv.Quote(name) + " (want name, token, role, tenant)"
		}
	}
	return e
}

// tokenBytes is the entropy of a generated token.
const tokenBytes = 32

// ensureToken makes sure the generated token exists in dataDir/auth-token (mode 0600):
// it is created on first start and read on later ones, so the CLI keeps working across
// restarts. created says this start wrote it.
func ensureToken(dataDir string) (path, token string, created bool, err error) {
	path = filepath.Join(dataDir, cli.TokenFile)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		token = strings.TrimSpace(string(data))
		if token == "" {
			return path, "", false, fmt.Errorf("the token file %s is empty: delete it to have a new token generated, or pass --auth-token", path)
		}
		return path, token, false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return path, "", false, fmt.Errorf("read the token file %s: %w", path, err)
	}
	var b [tokenBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return path, "", false, fmt.Errorf("generate a token: %w", err)
	}
	token = hex.EncodeToString(b[:])
	// O_EXCL: two servers started together must not overwrite each other's token.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return ensureToken(dataDir)
	}
	if err != nil {
		return path, "", false, fmt.Errorf("write the token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return path, "", false, fmt.Errorf("write the token file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return path, "", false, fmt.Errorf("write the token file %s: %w", path, err)
	}
	return path, token, true, nil
}
