package bootstrap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/domain/secret"
)

// migrateFlags are the flags `migrate up` and `migrate status` share.
type migrateFlags struct {
	history string
	dataDir string
	json    bool
}

// addMigrate wires `sluice migrate up|status`: the schema of the run history.
func addMigrate(root *cobra.Command, p *process) {
	f := &migrateFlags{}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply or inspect the migrations of the run history",
		Long: "Apply (up) or list (status) the schema migrations of the run history. `sluice serve`\n" +
			"applies them at start unless --no-migrate; use these with --no-migrate, or to check\n" +
			"whether this binary is older than a history's schema.",
		Example: `  sluice migrate status --history postgres://sluice@db:5432/sluice
  sluice migrate up --history postgres://sluice@db:5432/sluice
  sluice serve --no-migrate --history postgres://sluice@db:5432/sluice`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.history, "history", "", "run history: sqlite:PATH, sqlite://PATH, postgres://… or postgresql://… (default sqlite:<data-dir>/"+HistoryFileName+")")
	pf.StringVar(&f.dataDir, "data-dir", cli.DefaultDataDir, "data directory of the default history")
	pf.BoolVar(&f.json, "json", false, "print the result as JSON")
	cmd.AddCommand(
		&cobra.Command{
			Use:   "up",
			Short: "Apply the pending migrations",
			Example: `  sluice migrate up                           # the SQLite history of ./.sluice
  sluice migrate up --history postgres://sluice@db:5432/sluice --json`,
			RunE: func(cmd *cobra.Command, _ []string) error { return p.migrateUp(cmd, f) },
		},
		&cobra.Command{
			Use:   "status",
			Short: "List applied and pending migrations",
			Long:  "List applied and pending migrations, and say whether this binary is older than the schema.",
			Example: `  sluice migrate status
  sluice migrate status --history postgres://sluice@db:5432/sluice --json`,
			RunE: func(cmd *cobra.Command, _ []string) error { return p.migrateStatus(cmd, f) },
		},
	)
	root.AddCommand(cli.EnvAll(cmd))
}

// target validates the flags and returns the history URL and, for SQLite, its file.
func (f *migrateFlags) target() (historyURL, file string, derived bool, err error) {
	historyURL = strings.TrimSpace(f.history)
	if historyURL == "" {
		if strings.TrimSpace(f.dataDir) == "" {
			return "", "", false, cli.Usage(errors.New("invalid value for --data-dir: empty"))
		}
		historyURL, derived = "sqlite:"+filepath.Join(f.dataDir, HistoryFileName), true
	}
	if err := checkHistoryURL(historyURL); err != nil {
		return "", "", false, cli.Usage(fmt.Errorf("invalid value for --history: %w", err))
	}
	if historyURL == "memory" {
		return "", "", false, cli.Usage(errors.New("invalid value for --history: memory keeps nothing between processes, so it has no migrations to apply or list; name a sqlite: or postgres:// history"))
	}
	for _, prefix := range []string{"sqlite://", "sqlite:"} {
		if rest, ok := strings.CutPrefix(historyURL, prefix); ok {
			file = rest
			break
		}
	}
	return historyURL, file, derived, nil
}

// migrateResult is the JSON shape of both subcommands.
type migrateResult struct {
	History      string   `json:"history"`
	Applied      []string `json:"applied"`
	Pending      []string `json:"pending"`
	Unknown      []string `json:"unknown"`
	BinaryOlder  bool     `json:"binary_older"`
	AppliedNow   []string `json:"applied_now,omitempty"`
	SchemaStatus string   `json:"schema"`
}

func (p *process) openHistory(ctx context.Context, historyURL string) (*store.Store, error) {
	p.redactor.Register(historySecrets(historyURL)...)
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	st, err := store.Open(octx, historyURL, store.Options{})
	if err != nil {
		return nil, &cli.ExitError{Code: cli.ExitFailure, Err: errors.New(p.redactor.Redact(err.Error()))}
	}
	return st, nil
}

func (p *process) migrateUp(cmd *cobra.Command, f *migrateFlags) error {
	historyURL, file, derived, err := f.target()
	if err != nil {
		return err
	}
	if derived {
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("--data-dir: %w", err)}
		}
	}
	ctx := cmd.Context()
	st, err := p.openHistory(ctx, historyURL)
	if err != nil {
		return err
	}
	defer st.Close()
	before, _, err := st.MigrationStatus(ctx)
	if err != nil {
		return p.failure(err)
	}
	if err := st.Migrate(ctx); err != nil {
		return p.failure(err)
	}
	res, err := p.status(ctx, st, historyURL)
	if err != nil {
		return err
	}
	for _, m := range res.Applied {
		if !slices.Contains(before, m) {
			res.AppliedNow = append(res.AppliedNow, m)
		}
	}
	out := cmd.OutOrStdout()
	if f.json {
		return writeJSON(out, res)
	}
	if len(res.AppliedNow) == 0 {
		_, err = fmt.Fprintf(out, "history %s is up to date (%d migrations applied)\n", res.History, len(res.Applied))
		return err
	}
	_, err = fmt.Fprintf(out, "applied %d migration(s) to %s:\n  %s\n", len(res.AppliedNow), res.History,
		strings.Join(res.AppliedNow, "\n  "))
	return err
}

func (p *process) migrateStatus(cmd *cobra.Command, f *migrateFlags) error {
	historyURL, file, _, err := f.target()
	if err != nil {
		return err
	}
	// Opening a missing SQLite file would create an empty one: status changes nothing.
	if file != "" {
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf(
				"no history at %s: `sluice migrate up` or `sluice serve` creates it (or pass --history / --data-dir)", file)}
		}
	}
	ctx := cmd.Context()
	st, err := p.openHistory(ctx, historyURL)
	if err != nil {
		return err
	}
	defer st.Close()
	res, err := p.status(ctx, st, historyURL)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.json {
		return writeJSON(out, res)
	}
	return printStatus(out, res)
}

// status reads the migration state; Unknown are applied ids this binary lacks, which
// means the binary is older than the schema.
func (p *process) status(ctx context.Context, st *store.Store, historyURL string) (migrateResult, error) {
	applied, pending, err := st.MigrationStatus(ctx)
	if err != nil {
		return migrateResult{}, p.failure(err)
	}
	res := migrateResult{History: secret.MaskUserinfo(p.redactor.Redact(historyURL)), Applied: []string{},
		Pending: nonNil(pending), Unknown: []string{}}
	for _, m := range applied {
		// MigrationStatus names known migrations "NNNN_name" and unknown ones by bare id.
		if strings.Contains(m, "_") {
			res.Applied = append(res.Applied, m)
		} else {
			res.Unknown = append(res.Unknown, m)
		}
	}
	switch err := st.CheckSchema(ctx); {
	case err == nil:
		res.SchemaStatus = "up_to_date"
	case errors.Is(err, store.ErrSchemaTooNew):
		res.SchemaStatus, res.BinaryOlder = "newer_than_binary", true
	case errors.Is(err, store.ErrSchemaBehind):
		res.SchemaStatus = "pending"
	default:
		return migrateResult{}, p.failure(err)
	}
	return res, nil
}

func printStatus(w io.Writer, res migrateResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "history: %s\n", res.History)
	list := func(title string, items []string) {
		fmt.Fprintf(&b, "%s (%d):\n", title, len(items))
		for _, m := range items {
			fmt.Fprintf(&b, "  %s\n", m)
		}
	}
	list("applied", res.Applied)
	list("pending", res.Pending)
	if len(res.Unknown) > 0 {
		list("applied by a newer sluice (unknown to this binary)", res.Unknown)
	}
	switch res.SchemaStatus {
	case "up_to_date":
		b.WriteString("schema: up to date; this binary matches it\n")
	case "pending":
		b.WriteString("schema: migrations pending; run `sluice migrate up` (serve applies them at start unless --no-migrate)\n")
	case "newer_than_binary":
		b.WriteString("schema: NEWER than this binary, which is older than the schema and must not write to it; upgrade sluice\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (p *process) failure(err error) error {
	return &cli.ExitError{Code: cli.ExitFailure, Err: errors.New(p.redactor.Redact(err.Error()))}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
