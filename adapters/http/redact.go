package http

import (
	"math"
	"regexp"
	"time"
)

// Error messages can quote config values and connection strings. Before any message
// leaves the process it loses URL userinfo and the values of secret-looking keys.
var (
	userinfoRE = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s"']+@`)
	secretKVRE = regexp.MustCompile(`(?i)\b([a-z0-9_.-]*(?:password|passwd|secret|token|key))(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&"']+)`)
)

// redact removes credentials from s (SPEC §2.2: secrets and URL credentials are never
// echoed). It errs on the side of hiding: a key merely named like a secret is hidden too.
func redact(s string) string {
	s = userinfoRE.ReplaceAllString(s, "${1}REDACTED@")
	return secretKVRE.ReplaceAllString(s, "${1}${2}REDACTED")
}

// retryAfterSecs is the whole seconds a client should wait, never less than one.
func retryAfterSecs(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// Redact is the redaction every answer of the API gets; other transports (MCP) apply it
// to what they show so a secret is hidden the same way everywhere.
func Redact(s string) string { return redact(s) }
