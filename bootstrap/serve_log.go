package bootstrap

import (
	"io"
	"log/slog"

	"go.uber.org/fx/fxevent"

	"github.com/sluicehq/sluice/adapters/cli"
	apihttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/domain/secret"
)

// memberLog is the server's logger without the instance id: the member adds it to its
// own lines and to every run's, and a second copy would print it twice.
type memberLog struct{ *slog.Logger }

// newServeLogger is the server's logger in --log-format (by default JSON for log
// collectors when stderr is not a terminal, text for people when it is); every record
// passes the process redactor, and a record logged with a request's context carries its
// request_id. Callers add the instance id, so lines of several members can be told apart.
func newServeLogger(w io.Writer, level slog.Level, format string, r *secret.Redactor) (*slog.Logger, error) {
	h, err := cli.NewLogHandler(w, format, &slog.HandlerOptions{Level: level}, cli.IsTerminal(w))
	if err != nil {
		return nil, err
	}
	return slog.New(secret.NewHandler(apihttp.LogHandler(h), r)), nil
}

// fxLogger sends fx's own events (provides, hooks) to the server log at debug level,
// errors included: start failures are reported once, by the serve command.
func fxLogger(log *slog.Logger) fxevent.Logger {
	l := &fxevent.SlogLogger{Logger: log.With("component", "fx")}
	l.UseLogLevel(slog.LevelDebug)
	l.UseErrorLevel(slog.LevelDebug)
	return l
}
