package harness

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// TableFunc measures a whole suite whose numbers are not rows per second (latencies,
// runs per second, recovery times) and returns the table to print in place of the
// pipeline table. Suite.Table holds one.
type TableFunc func(ctx context.Context, env *Env) (Table, error)

// Table is a suite's own table: a header and rows of preformatted cells, left column
// first. Numbers are formatted by the suite, which knows their units.
type Table struct {
	Columns []string
	Rows    [][]string
}

// writeTable prints the report of a table suite: the header lines of Write without the
// row count (a table suite chooses its own sizes and notes them), the table, the notes.
func (r Report) writeTable(w io.Writer, markdown bool) error {
	var b strings.Builder
	t := *r.Table
	if markdown {
		fmt.Fprintf(&b, "Suite `%s` — %s  \n", r.Suite, r.Machine)
		fmt.Fprintf(&b, "Command: `%s`\n\n", r.Command)
		b.WriteString("| " + strings.Join(t.Columns, " | ") + " |\n")
		b.WriteString("|---|" + strings.Repeat("--:|", max(len(t.Columns)-1, 0)) + "\n")
		for _, row := range t.Rows {
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
	} else {
		fmt.Fprintf(&b, "suite:   %s\n", r.Suite)
		fmt.Fprintf(&b, "machine: %s\n", r.Machine)
		fmt.Fprintf(&b, "command: %s\n\n", r.Command)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(t.Columns, "\t")+"\t")
		for _, row := range t.Rows {
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	r.footer(&b, markdown)
	_, err := io.WriteString(w, b.String())
	return err
}
