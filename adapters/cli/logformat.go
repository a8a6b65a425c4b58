package cli

import (
	"fmt"
	"io"
	"log/slog"
)

// Values of --log-format (SPEC §14.6). Auto, the default, is text on a terminal (for
// people) and JSON otherwise (for log collectors).
const (
	LogFormatAuto = ""
	LogFormatJSON = "json"
	LogFormatText = "text"
)

// LogFormatUsage is the help text of --log-format, shared by serve and run.
const LogFormatUsage = "log line format: json or text (default: text on a terminal, else json)"

// NewLogHandler is the slog handler of --log-format format writing to w; terminal says
// whether w is one (it decides the automatic format).
func NewLogHandler(w io.Writer, format string, opts *slog.HandlerOptions, terminal bool) (slog.Handler, error) {
	switch format {
	case LogFormatJSON:
		return slog.NewJSONHandler(w, opts), nil
	case LogFormatText:
		return slog.NewTextHandler(w, opts), nil
	case LogFormatAuto:
		if terminal {
			return slog.NewTextHandler(w, opts), nil
		}
		return slog.NewJSONHandler(w, opts), nil
	}
	return nil, Usage(fmt.Errorf("invalid value for --log-format: %q (want json or text)", format))
}
