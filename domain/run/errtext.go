package run

import (
	"strconv"
	"unicode/utf8"
)

// MaxErrorText is the most of a run's error message the history keeps (SPEC §14.3). A
// message can quote what a request sent — a 900 KB path made a 900 KB error, and twenty
// of them a 17.8 MB list answer.
const MaxErrorText = 4 << 10

// ClipError returns msg cut to at most MaxErrorText bytes, on a rune boundary, ending in
// a marker that says how long it was.
func ClipError(msg string) string {
	if len(msg) <= MaxErrorText {
		return msg
	}
	marker := "… [truncated: " + strconv.Itoa(len(msg)) + " bytes]"
	cut := MaxErrorText - len(marker)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + marker
}
