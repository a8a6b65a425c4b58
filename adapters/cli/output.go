package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// grid is a table: a header and rows; wide adds the columns -o wide shows.
type grid struct {
	header, wideHeader []string
	rows, wideRows     [][]string
}

func (g *grid) add(row []string, wide ...string) {
	g.rows = append(g.rows, row)
	g.wideRows = append(g.wideRows, wide)
}

func (g grid) write(w io.Writer, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := g.header
	if wide {
		header = append(append([]string{}, header...), g.wideHeader...)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for i, r := range g.rows {
		if wide {
			r = append(append([]string{}, r...), g.wideRows[i]...)
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// view is what one get or list command prints: v for json and yaml, the names for -o name
// (one per line, what other commands take as an argument), and the table.
type view struct {
	v     any
	names []string
	table func(w io.Writer, wide bool) error
}

// print writes v in the format -o chose.
func (f *runsFlags) print(w io.Writer, v view) error {
	switch f.output {
	case OutputJSON, OutputYAML:
		return f.encode(w, v.v)
	case OutputName:
		for _, n := range v.names {
			if _, err := fmt.Fprintln(w, n); err != nil {
				return err
			}
		}
		return nil
	}
	return v.table(w, f.output == OutputWide)
}

// printPage prints one page of a list; when there are more, stderr says how to get the
// next one (json and yaml carry next_cursor themselves).
func (f *runsFlags) printPage(cmd *cobra.Command, v view, what string, next *string) error {
	if err := f.print(cmd.OutOrStdout(), v); err != nil {
		return err
	}
	if next != nil && f.output != OutputJSON && f.output != OutputYAML {
		fmt.Fprintf(cmd.ErrOrStderr(), "more %s: add --cursor %s\n", what, *next)
	}
	return nil
}

// encode writes v as JSON (one line) or YAML, with the field names of the REST API.
func (f *runsFlags) encode(w io.Writer, v any) error {
	if f.output == OutputYAML {
		return writeYAML(w, v)
	}
	return writeJSON(w, v)
}

// writeYAML renders v through its JSON form, so YAML shows exactly the API's fields.
func writeYAML(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return err
	}
	blockStyle(&n)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return err
	}
	return enc.Close()
}

// blockStyle turns JSON's flow style into YAML's block style, except for empty
// collections, which only flow style can show.
func blockStyle(n *yaml.Node) {
	if len(n.Content) > 0 {
		n.Style &^= yaml.FlowStyle
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		n.Style &^= yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// orDash shows a missing value as "-" so columns stay aligned.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
