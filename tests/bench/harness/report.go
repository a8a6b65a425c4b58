package harness

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Report is everything printed for one suite run.
type Report struct {
	Suite   string
	Rows    int64
	Repeat  int
	Machine Machine
	// Command is the exact command line that reproduces the run.
	Command string
	Notes   []string
	Results []Result
	// Table is the table of a table suite (Suite.Table), printed instead of Results.
	Table *Table
}

var columns = []string{"pipeline", "rows", "seconds", "rows/s", "peak RSS MiB", "vs baseline (%)"}

// Write prints the report as aligned text or, with markdown, as a Markdown table ready
// for the README. Failed cases are rows without numbers, explained below the table.
func (r Report) Write(w io.Writer, markdown bool) error {
	if r.Table != nil {
		return r.writeTable(w, markdown)
	}
	var b strings.Builder
	repeat := ""
	if r.Repeat > 1 {
		repeat = fmt.Sprintf(", fastest of %d runs each", r.Repeat)
	}
	if markdown {
		fmt.Fprintf(&b, "Suite `%s`, %s rows%s — %s  \n", r.Suite, Thousands(r.Rows), repeat, r.Machine)
		fmt.Fprintf(&b, "Command: `%s`\n\n", r.Command)
		r.markdownTable(&b)
	} else {
		fmt.Fprintf(&b, "suite:   %s, %s rows%s\n", r.Suite, Thousands(r.Rows), repeat)
		fmt.Fprintf(&b, "machine: %s\n", r.Machine)
		fmt.Fprintf(&b, "command: %s\n\n", r.Command)
		if err := r.textTable(&b); err != nil {
			return err
		}
	}
	r.footer(&b, markdown)
	_, err := io.WriteString(w, b.String())
	return err
}

func (r Report) cells() [][]string {
	base := r.baseline()
	rows := make([][]string, 0, len(r.Results))
	for _, res := range r.Results {
		if res.Err != nil {
			rows = append(rows, []string{res.Label, "—", "—", "—", "—", "FAILED"})
			continue
		}
		rss := "—"
		if res.PeakRSSKiB >= 0 {
			rss = strconv.FormatFloat(mib(res.PeakRSSKiB), 'f', 1, 64)
		}
		vs := "—"
		if base > 0 {
			vs = strconv.FormatFloat(100*res.RowsPerSec()/base, 'f', 0, 64)
		}
		rows = append(rows, []string{
			res.Label,
			Thousands(res.Rows),
			strconv.FormatFloat(res.Wall.Seconds(), 'f', 2, 64),
			Thousands(int64(res.RowsPerSec() + 0.5)),
			rss,
			vs,
		})
	}
	return rows
}

// baseline is the rows/s of the suite's baseline case, or 0 when it did not run or failed.
func (r Report) baseline() float64 {
	for _, res := range r.Results {
		if res.Baseline && res.Err == nil {
			return res.RowsPerSec()
		}
	}
	return 0
}

func (r Report) markdownTable(b *strings.Builder) {
	b.WriteString("| " + strings.Join(columns, " | ") + " |\n")
	b.WriteString("|---|" + strings.Repeat("--:|", len(columns)-1) + "\n")
	for _, row := range r.cells() {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
}

func (r Report) textTable(b *strings.Builder) error {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	// AlignRight pads every cell on the left; the trailing tab ends the last cell so it is
	// aligned too.
	fmt.Fprintln(tw, strings.Join(columns, "\t")+"\t")
	for _, row := range r.cells() {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

func (r Report) footer(b *strings.Builder, markdown bool) {
	bullet := ""
	if markdown {
		bullet = "- "
	}
	var lines []string
	lines = append(lines, r.Notes...)
	for _, res := range r.Results {
		if res.Err != nil {
			// A child's output spans lines; indenting keeps it inside the Markdown bullet.
			msg := strings.ReplaceAll(res.Err.Error(), "\n", "\n  ")
			lines = append(lines, fmt.Sprintf("%s FAILED: %s", res.Label, msg))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n")
	for _, l := range lines {
		b.WriteString(bullet + l + "\n")
	}
}

// Thousands formats n with comma separators: 1234567 → "1,234,567".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
