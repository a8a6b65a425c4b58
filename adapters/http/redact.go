package http

import (
	"math"
	"regexp"
	"time"
)

// Error messages can quote config values and connection strings. Before any message
// leaves the process it loses its URL userinfo — the whole of it, since a token is often
// sent as the user name alone (https://TOKEN@host).
// A password=VALUE pair (a URL query parameter, a libpq connection string) is a URL
// password in another spelling; "password:" in prose is not matched.
var (
	userinfoRE = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s"']+@`)
	passwordRE = regexp.MustCompile(`(?i)\b(password|passwd)=[^\s&;,)'"]+`)
)

// redact removes URL credentials from s (SPEC §2.2, §14.3). It does not guess at secrets
// from the words around them: "key: [COLUMNS]" or "a vault key: start the server with"
// are instructions a user must be able to read, and a secret value never reaches a
// message next to its key name — configs carry ${secret:}/${sealed:} directives, and
// registered secret values are masked by the redactor of the process that resolved them.
func redact(s string) string {
	s = userinfoRE.ReplaceAllString(s, "${1}REDACTED@")
	return passwordRE.ReplaceAllString(s, "${1}=REDACTED")
}

// retryAfterSecs is the whole seconds a client should wait, never less than one.
func retryAfterSecs(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// Redact is the redaction every answer of the API gets; other transports (MCP) apply it
// to what they show so a secret is hidden the same way everywhere.
func Redact(s string) string { return redact(s) }
