package naming

import "fmt"

// MaxLen is the longest valid name.
const MaxLen = 63

// Valid reports whether s is a valid name. Written by hand rather than with regexp: it
// runs on every request and every label.
func Valid(s string) bool {
	if len(s) == 0 || len(s) > MaxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Check returns an error naming what (e.g. "pool") when s is not a valid name.
func Check(what, s string) error {
	if Valid(s) {
		return nil
	}
	return fmt.Errorf("%s %s is not a valid name: use 1-63 characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit", what, Quote(s))
}
