package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// EnvPrefix starts the environment variable of every flag.
const EnvPrefix = "SLUICE_"

// AnnotationEnvAlias lists extra environment variables a flag also reads (checked after
// the canonical one), e.g. SLUICE_SERVE_POOLS for --pool.
const AnnotationEnvAlias = "sluice_env_alias"

// AnnotationEnvAll marks a command whose own flags are settings of a long-lived process
// (serve, run, migrate), so every one of them reads its SLUICE_* variable. Other commands
// read only the GlobalFlags from the environment (SPEC §14.7).
const AnnotationEnvAll = "sluice_env_all"

// EnvAll marks cmd so all its flags read SLUICE_* variables; it returns cmd.
func EnvAll(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[AnnotationEnvAll] = "true"
	return cmd
}

// AnnotationEnvRead opts one flag of another command in, when it mirrors a server
// setting (schedule next's --timezone is serve's --timezone).
const AnnotationEnvRead = "sluice_env_read"

// readsEnv reports whether flag f of cmd takes a SLUICE_* variable.
func readsEnv(cmd *cobra.Command, f *pflag.Flag) bool {
	if slices.Contains(GlobalFlags, f.Name) || f.Annotations[AnnotationEnvRead] != nil {
		return true
	}
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[AnnotationEnvAll] != "" {
			return true
		}
	}
	return false
}

// EnvName is the environment variable of a flag: SLUICE_ + the flag in upper snake case
// (--lease-ttl-secs → SLUICE_LEASE_TTL_SECS).
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// BindEnv gives every flag of fs that was not set on the command line, and that bound
// accepts, the value of its environment variable. Repeatable flags take a comma list.
// Every bad value is reported, each naming its flag and variable; the caller exits 2.
func BindEnv(fs *pflag.FlagSet, lookup func(string) (string, bool), bound func(*pflag.Flag) bool) error {
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "help" || !bound(f) {
			return
		}
		name, v, ok := envValue(f, lookup)
		if !ok {
			return
		}
		var err error
		if sv, isSlice := f.Value.(pflag.SliceValue); isSlice {
			err = sv.Replace(splitList(v))
		} else {
			err = f.Value.Set(v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid value for --%s (from %s): %w", f.Name, name, err))
			return
		}
		f.Changed = true
	})
	return errors.Join(errs...)
}

func envValue(f *pflag.Flag, lookup func(string) (string, bool)) (string, string, bool) {
	names := append([]string{EnvName(f.Name)}, f.Annotations[AnnotationEnvAlias]...)
	for _, n := range names {
		// An empty variable counts as unset, so `SLUICE_X= sluice …` restores the default.
		if v, ok := lookup(n); ok && v != "" {
			return n, v, true
		}
	}
	return "", "", false
}

func splitList(v string) []string {
	parts := strings.Split(v, ",")
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// prepare applies the environment rule to every command of the tree: the variable is
// named in --help, and bound before the command's own PreRunE so its validations see
// environment values too.
func prepare(root *cobra.Command, lookup func(string) (string, bool)) {
	walk(root, func(c *cobra.Command) {
		annotate(c, c.LocalNonPersistentFlags())
		annotate(c, c.PersistentFlags())
		c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return Usage(err) })
		if !c.Runnable() {
			// Left alone so cobra reports `sluice frobnicate` as an unknown command.
			return
		}
		if c.Args == nil {
			c.Args = cobra.NoArgs
		}
		args := c.Args
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return Usage(err)
			}
			return nil
		}
		// cobra runs PreRunE instead of PreRun when both are set, so a PreRun is folded in.
		pre, preRun := c.PreRunE, c.PreRun
		c.PreRun = nil
		c.PreRunE = func(cmd *cobra.Command, a []string) error {
			bound := func(f *pflag.Flag) bool { return readsEnv(cmd, f) }
			if err := BindEnv(cmd.Flags(), lookup, bound); err != nil {
				return Usage(err)
			}
			switch {
			case pre != nil:
				return pre(cmd, a)
			case preRun != nil:
				preRun(cmd, a)
			}
			return nil
		}
	})
}

func annotate(c *cobra.Command, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || strings.Contains(f.Usage, EnvPrefix) || !readsEnv(c, f) {
			return
		}
		f.Usage += " [$" + EnvName(f.Name) + "]"
	})
}

func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}
