package cfg

import (
	"net/url"
	"strings"
)

// RedactURL renders a URL for messages: the user info is replaced by "REDACTED" and the
// query string is dropped, because signed URLs and many drivers carry secrets there.
// Text that does not parse as a URL is reduced to what precedes any "@", "?" or "#".
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		cut := raw
		if i := strings.LastIndex(cut, "@"); i >= 0 {
			cut = "REDACTED@" + cut[i+1:]
		}
		if i := strings.IndexAny(cut, "?#"); i >= 0 {
			cut = cut[:i]
		}
		return cut
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	u.RawQuery = ""
	u.ForceQuery = false
	u.Fragment = ""
	u.RawFragment = ""
	return u.String()
}
