package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli/client"
)

// GlobalFlags are the flags every command has and the only ones, beside serve's and
// run's own, that read SLUICE_* variables (SPEC §14.7): a per-call filter such as
// `runs list --pool` must never pick up SLUICE_POOL exported for a server.
var GlobalFlags = []string{"server", "token", "data-dir", "context", "output"}

// Output formats of -o.
const (
	OutputTable = "table"
	OutputWide  = "wide"
	OutputJSON  = "json"
	OutputYAML  = "yaml"
	OutputName  = "name"
)

var outputFormats = []string{OutputTable, OutputWide, OutputJSON, OutputYAML, OutputName}

// addGlobalFlags puts the global flags on the root, so `sluice --context prod runs list`
// and `sluice runs list --context prod` both work. Commands with a --data-dir of their
// own (serve, run, migrate) shadow the global one with the same meaning.
func addGlobalFlags(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.String("server", "", "base URL of the sluice server (default: the context's, else the url in <data-dir>/"+
		ServerFileName+", else "+DefaultServer+")")
	pf.String("token", "", "API bearer token (default: the context's token file, else <data-dir>/"+TokenFile+")")
	pf.String("data-dir", DefaultDataDir, "data directory of a local server: its "+ServerFileName+" and "+TokenFile+" are read")
	pf.String("context", "", "talk to this context's server (see 'sluice context list') instead of the current context's")
	pf.StringP("output", "o", OutputTable, "output format: "+strings.Join(outputFormats, ", "))
	pf.Bool("json", false, "same as -o json")
	_ = pf.MarkHidden("json")
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
}

// connection is where a command's server address and token came from, so a refusal can
// say which flag to change.
type connection struct {
	url, token string
	// from says how url was chosen, e.g. "--server" or "context prod".
	from string
	// serverFile is the server.json that was looked at and what was found there.
	serverFile, serverFileState string
}

// load reads the global flags of cmd (after the environment was bound) into f and
// finds the server.
func (f *runsFlags) load(cmd *cobra.Command) error {
	fl := cmd.Flags()
	str := func(name string) string { v, _ := fl.GetString(name); return v }
	f.server, f.token, f.dataDir, f.context = str("server"), str("token"), str("data-dir"), str("context")
	f.output = str("output")
	if asJSON, _ := fl.GetBool("json"); asJSON && !fl.Changed("output") {
		f.output = OutputJSON
	}
	if !slices.Contains(outputFormats, f.output) {
		return Usage(fmt.Errorf("invalid value for -o/--output: %q (want one of %s)", f.output, strings.Join(outputFormats, ", ")))
	}
	f.json = f.output == OutputJSON
	return nil
}

// resolve picks the server in this order: --server; --context (or the current
// context); the server.json a running `sluice serve` wrote into --data-dir; the default
// address.
func (f *runsFlags) resolve(cmd *cobra.Command) (connection, error) {
	if err := f.load(cmd); err != nil {
		return connection{}, err
	}
	c := connection{serverFile: filepath.Join(f.dataDir, ServerFileName)}
	if abs, err := filepath.Abs(c.serverFile); err == nil {
		c.serverFile = abs
	}
	cs, err := loadContexts(f.deps.ConfigDir)
	if err != nil {
		return c, Usage(err)
	}
	ctxName := f.context
	if ctxName == "" {
		ctxName = cs.Current
	}
	var ctx Context
	if ctxName != "" {
		var ok bool
		if ctx, ok = cs.find(ctxName); !ok {
			return c, Usage(fmt.Errorf("invalid value for --context: no context %q (see `sluice context list`)", ctxName))
		}
	}
	sf, sfErr := ReadServerFile(f.dataDir)
	switch {
	case sfErr == nil:
		c.serverFileState = "found " + sf.URL
	case errors.Is(sfErr, fs.ErrNotExist):
		c.serverFileState = "not found"
	default:
		c.serverFileState = sfErr.Error()
	}
	switch {
	case f.server != "":
		c.url, c.from = f.server, "--server"
	case ctxName != "":
		c.url, c.from = ctx.Server, "context "+ctxName
	case sfErr == nil:
		c.url, c.from = sf.URL, c.serverFile
	default:
		c.url, c.from = DefaultServer, "the default address"
	}
	u, err := url.Parse(c.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, Usage(fmt.Errorf("invalid value for --server (from %s): %q is not a URL like %s", c.from, c.url, DefaultServer))
	}
	c.token, err = f.findToken(ctx)
	return c, err
}

// findToken: --token; the context's token file; the data directory's token file.
func (f *runsFlags) findToken(ctx Context) (string, error) {
	if t := strings.TrimSpace(f.token); t != "" {
		return t, nil
	}
	if ctx.TokenFile != "" {
		b, err := os.ReadFile(ctx.TokenFile)
		if err != nil {
			return "", Usage(fmt.Errorf("read the token file of context %s (fix it with `sluice context add %s --token-file FILE`): %w",
				ctx.Name, ctx.Name, err))
		}
		return strings.TrimSpace(string(b)), nil
	}
	if f.dataDir == "" {
		return "", nil
	}
	path := filepath.Join(f.dataDir, TokenFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		return strings.TrimSpace(string(b)), nil
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	default:
		return "", fmt.Errorf("read the token file %s (or pass --token): %w", path, err)
	}
}

// client builds the API client for cmd from the global flags.
func (f *runsFlags) client(cmd *cobra.Command) (*client.Client, error) {
	c, err := f.resolve(cmd)
	if err != nil {
		return nil, err
	}
	f.conn = c
	return &client.Client{BaseURL: c.url, Token: c.token, HTTP: f.deps.HTTP}, nil
}

// unreachableHint tells which knobs choose the server, and what was looked at.
func (f *runsFlags) unreachableHint() string {
	return fmt.Sprintf("hint: the address came from %s. Pass --server URL, choose a context with --context NAME "+
		"(`sluice context list`), or point --data-dir at the server's data directory (looked at %s: %s)",
		f.conn.from, f.conn.serverFile, f.conn.serverFileState)
}
