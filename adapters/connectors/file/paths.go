package file

import (
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
)

func isURL(p string) bool {
	l := strings.ToLower(p)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// displayPath is how a path or URL appears in messages: URLs lose credentials and query.
func displayPath(p string) string {
	if isURL(p) {
		return cfg.RedactURL(p)
	}
	return p
}

// nameOf is the name whose extension tells a path's format: a URL's path, else p.
func nameOf(p string) string {
	if isURL(p) {
		if u, err := url.Parse(p); err == nil {
			return u.Path
		}
		return ""
	}
	return p
}
