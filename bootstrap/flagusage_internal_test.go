package bootstrap

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// pflag reads the first `quoted` word of a flag's usage as the name of its value, so a
// usage that quotes a command in backquotes shows as `--wait sluice runs wait --help`: a
// flag that seems to take three words. Every value name on every help page is one word.
func TestFlagValueNamesAreOneWord(t *testing.T) {
	t.Parallel()
	root := helpRoot()
	var wrong []string
	flags := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			flags++
			if name, _ := pflag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
				wrong = append(wrong, c.CommandPath()+" --"+f.Name+" shows its value as "+name)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	require.Greater(t, flags, 100, "the whole tree was walked")
	require.Empty(t, wrong, "a backquoted phrase in a flag's usage becomes its value name")
}
