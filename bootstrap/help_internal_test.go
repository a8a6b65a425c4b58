package bootstrap

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/domain/secret"
)

// Every help page of the binary — each command and each group, as main wires them —
// shows examples (SPEC §14.7), so `sluice X --help` always ends with something to copy.
func TestEveryHelpPageHasAnExample(t *testing.T) {
	t.Parallel()
	root := helpRoot()
	var pages, missing []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		pages = append(pages, c.CommandPath())
		if strings.TrimSpace(c.Example) == "" {
			missing = append(missing, c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	t.Logf("%d help pages", len(pages))
	require.Greater(t, len(pages), 40, "the whole tree was walked: %v", pages)
	require.Empty(t, missing, "help pages without an example")
}

// An example names only commands and flags that exist, so a renamed flag cannot leave a
// help page showing the old one.
func TestHelpExamplesNameRealFlags(t *testing.T) {
	t.Parallel()
	root := helpRoot()
	var wrong []string
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, line := range strings.Split(c.Example, "\n") {
			for _, call := range exampleCalls(line) {
				cmd, rest, err := root.Find(call)
				if err != nil {
					wrong = append(wrong, c.CommandPath()+": "+strings.Join(call, " ")+": "+err.Error())
					continue
				}
				for _, arg := range rest {
					name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
					if !strings.HasPrefix(arg, "--") || name == "" {
						continue
					}
					checked++
					if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil {
						wrong = append(wrong, c.CommandPath()+": "+cmd.CommandPath()+" has no --"+name)
					}
				}
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	require.Empty(t, wrong)
	require.Greater(t, checked, 40, "the examples' flags were checked")
}

// exampleCalls are the sluice invocations of one example line (after a pipe, &&, $( …),
// without the program name and without a trailing comment.
func exampleCalls(line string) [][]string {
	line, _, _ = strings.Cut(line, " #")
	var calls [][]string
	var cur []string
	in := false
	for _, f := range strings.Fields(line) {
		switch {
		case f == "|" || f == "&&" || f == "||" || f == "&" || f == ";":
			if in {
				calls = append(calls, cur)
			}
			in, cur = false, nil
		case f == "sluice" || f == "$(sluice" || f == "\"$(sluice":
			if in {
				calls = append(calls, cur)
			}
			in, cur = true, nil
		case in && f != "\\":
			cur = append(cur, strings.TrimRight(f, ")\""))
		}
	}
	if in {
		calls = append(calls, cur)
	}
	return calls
}

// helpRoot is the command tree as main wires it, with an empty environment.
func helpRoot() *cobra.Command {
	return newRootCommand(&process{env: cli.Env{Lookup: func(string) (string, bool) { return "", false }},
		redactor: secret.NewRedactor(), info: buildInfo()})
}
