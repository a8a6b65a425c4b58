package secret

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MinLen is the shortest secret value, in characters. A shorter value would be found all
// over a config (and a log) by chance, and too short to be worth sealing.
const MinLen = 4

// tokenPrefix starts every sealed token: ${sealed:N}.
const tokenPrefix = "${sealed:"

// Token returns the placeholder of the n-th secret value.
func Token(n int) string { return tokenPrefix + strconv.Itoa(n) + "}" }

// Errors of Tokenize and Restore.
var (
	// ErrTooShort: a secret value is shorter than MinLen characters.
	ErrTooShort = errors.New("secret value too short")
	// ErrTokenInText: the text to tokenize already holds a ${sealed:N} token, which
	// Restore could not tell apart from the ones Tokenize writes.
	ErrTokenInText = errors.New("text already contains a sealed token")
	// ErrUnknownToken: Restore met a token with no matching value, or a malformed one.
	ErrUnknownToken = errors.New("unknown sealed token")
)

// Tokenize replaces every occurrence of each values[N] in text by ${sealed:N}. Longer
// values are matched first, so a value that contains another is replaced whole rather
// than leaving part of itself behind. A value shorter than MinLen characters is refused
// (the error names its index, never the value).
func Tokenize(text string, values []string) (string, error) {
	if len(values) == 0 {
		return text, nil
	}
	for i, v := range values {
		if utf8.RuneCountInString(v) < MinLen {
			return "", fmt.Errorf("%w: secret value %d is shorter than %d characters: secret params must be at least %d characters long", ErrTooShort, i, MinLen, MinLen)
		}
	}
	if strings.Contains(text, tokenPrefix) {
		return "", fmt.Errorf("%w: %sN} tokens are written by the server and cannot be part of a submitted config", ErrTokenInText, tokenPrefix)
	}
	order := make([]int, len(values))
	for i := range order {
		order[i] = i
	}
	// Longest first; among equal lengths the lower index, so duplicates map to one token.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(values[b]), len(values[a])) })
	pairs := make([]string, 0, 2*len(values))
	for _, i := range order {
		pairs = append(pairs, values[i], Token(i))
	}
	// A Replacer scans once, trying the pairs in argument order at each position: a
	// token it wrote is never scanned again, and the longest value wins.
	return strings.NewReplacer(pairs...).Replace(text), nil
}

// Restore puts values back in place of the ${sealed:N} tokens of text. A token whose N
// has no value, or a malformed token, is an error: running a config with a token left
// in it would send the token text to a database as a password.
func Restore(text string, values []string) (string, error) {
	if !strings.Contains(text, tokenPrefix) {
		return text, nil
	}
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, tokenPrefix)
		if i < 0 {
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i+len(tokenPrefix):]
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return "", fmt.Errorf("%w: %s without a closing brace", ErrUnknownToken, tokenPrefix)
		}
		n, err := strconv.Atoi(rest[:end])
		if err != nil || n < 0 || rest[:end] != strconv.Itoa(n) {
			return "", fmt.Errorf("%w: %q is not a sealed token", ErrUnknownToken, tokenPrefix+rest[:end]+"}")
		}
		if n >= len(values) {
			return "", fmt.Errorf("%w: %s has no sealed value (the run has %d)", ErrUnknownToken, Token(n), len(values))
		}
		b.WriteString(values[n])
		rest = rest[end+1:]
	}
	b.WriteString(rest)
	return b.String(), nil
}
