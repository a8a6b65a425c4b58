package naming

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxEcho is how many bytes of a refused value an error message quotes. A message that
// echoed the whole value would let one request make every later answer (and log line)
// as large as its body.
const MaxEcho = 64

// Quote is s quoted for an error message, cut at MaxEcho bytes (on a rune boundary) with
// the full length named, so a 900 KB value reads as its first line and its size.
func Quote(s string) string {
	if len(s) <= MaxEcho {
		return strconv.Quote(s)
	}
	cut := MaxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// TextProblem says why s cannot be stored as text: the histories refuse NUL bytes
// (PostgreSQL rejects them in TEXT, SQLite cuts strings at them) and every API answer
// is JSON, which cannot carry invalid UTF-8 unchanged. "" means s is fine.
func TextProblem(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return "contains a NUL byte"
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	return ""
}
