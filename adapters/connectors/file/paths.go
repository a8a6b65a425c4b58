package file

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
)

func isURL(p string) bool {
	l := strings.ToLower(p)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// extension is the extension of a path or of a URL's path.
func extension(p string) string {
	if isURL(p) {
		if u, err := url.Parse(p); err == nil {
			return path.Ext(u.Path)
		}
		return ""
	}
	return filepath.Ext(p)
}

// displayPath is how a path or URL appears in messages: URLs lose credentials and query.
func displayPath(p string) string {
	if isURL(p) {
		return cfg.RedactURL(p)
	}
	return p
}
