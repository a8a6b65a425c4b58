package file

import (
	"net/url"
	"strconv"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Targets lists what path reaches, for the submit-time confinement check (SPEC §14.1):
// a local path (for a glob, its pattern), or the host of an http(s) URL.
func (*Connector) Targets(_ pipeline.Role, c map[string]any) []execute.Target {
	p, err := cfg.String(c, "path", "")
	if err != nil || p == "" {
		return nil
	}
	if !isURL(p) {
		return []execute.Target{{Key: "path", Path: p}}
	}
	u, err := url.Parse(p)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	port := uint64(80)
	if u.Scheme == "https" {
		port = 443
	}
	if u.Port() != "" {
		if port, err = strconv.ParseUint(u.Port(), 10, 16); err != nil {
			return nil
		}
	}
	return []execute.Target{{Key: "path", Host: u.Hostname(), Port: uint16(port)}}
}
