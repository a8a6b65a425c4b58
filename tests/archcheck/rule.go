package archcheck

import (
	"fmt"
	"strings"
)

// Module is the module path every rule is relative to.
const Module = "github.com/sluicehq/sluice"

// domainAllowed lists the only non-standard imports the domain may use.
var domainAllowed = []string{
	"github.com/google/uuid",
	"github.com/robfig/cron/v3",
}

// isStd reports whether an import path belongs to the standard library (no dot in its
// first element).
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func layerOf(pkg string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, Module), "/")
	first, _, _ := strings.Cut(rel, "/")
	return first
}

// adapterOf returns the adapter name of a package under adapters/, or "".
func adapterOf(pkg string) string {
	rel := strings.TrimPrefix(pkg, Module+"/adapters/")
	if rel == pkg {
		return ""
	}
	name, _, _ := strings.Cut(rel, "/")
	return name
}

// Check returns why pkg may not import imp, or "" when it may. Test files are not
// checked (tests may wire adapters together).
func Check(pkg, imp string) string {
	layer := layerOf(pkg)
	own := strings.HasPrefix(imp, Module+"/") || imp == Module
	if imp == "go.uber.org/fx" || strings.HasPrefix(imp, "go.uber.org/fx/") {
		if layer != "bootstrap" {
			return "only bootstrap may import go.uber.org/fx"
		}
		return ""
	}
	switch layer {
	case "domain":
		if own && layerOf(imp) != "domain" {
			return "domain may import only domain packages"
		}
		if !own && !isStd(imp) && !hasPrefixAny(imp, domainAllowed) {
			return fmt.Sprintf("domain may import only the standard library and %v", domainAllowed)
		}
	case "application":
		if own && layerOf(imp) != "domain" && layerOf(imp) != "application" {
			return "application may import only domain and application packages"
		}
		if !own && !isStd(imp) && !hasPrefixAny(imp, domainAllowed) {
			return "application may import only the standard library, domain and the domain allow-list"
		}
	case "adapters":
		if own {
			switch layerOf(imp) {
			case "bootstrap", "tests":
				return "adapters may not import " + layerOf(imp)
			case "adapters":
				if adapterOf(imp) != adapterOf(pkg) {
					return "an adapter may not import another adapter"
				}
			}
		}
	case "migrations":
		if own {
			return "migrations import nothing of the project"
		}
	}
	return ""
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if s == p || strings.HasPrefix(s, p+"/") {
			return true
		}
	}
	return false
}
