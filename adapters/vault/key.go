package vault

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of a vault key in bytes (AES-256).
const KeySize = 32

// The flags (and their variables) a key comes from; errors name them so the operator
// knows what to change.
const (
	flagKey         = "--vault-key"
	flagPreviousKey = "--vault-previous-key"
)

// ParseKey decodes a base64 vault key (standard or URL alphabet, padded or not; blanks
// around it are ignored) and checks that it is exactly KeySize bytes. The error names the
// flags a key is given with and never quotes the input.
func ParseKey(s string) ([]byte, error) {
	key, err := parseKey(s)
	if err != nil {
		return nil, fmt.Errorf("vault key (%s / %s): %w", flagKey, flagPreviousKey, err)
	}
	return key, nil
}

func parseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("is empty: run `sluice keygen` to make one")
	}
	// `sluice keygen` prints standard base64, but operators also paste URL-safe or
	// unpadded keys made by other tools.
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding,
	} {
		key, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("decodes to %d bytes, want %d: run `sluice keygen` to make one", len(key), KeySize)
		}
		return key, nil
	}
	return nil, errors.New("is not base64 (standard or URL alphabet): run `sluice keygen` to make one")
}

// GenerateKey returns a fresh random key in standard base64, as `sluice keygen` prints it.
func GenerateKey() (string, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("read random bytes for a vault key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(key), nil
}

// FromBase64 is New for keys as the flags hold them (--vault-key, then each
// --vault-previous-key). Each error names the flag — and for a previous key its position
// — whose value to change.
func FromBase64(current string, previous ...string) (*Vault, error) {
	cur, err := parseKey(current)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagKey, err)
	}
	prev := make([][]byte, len(previous))
	for i, s := range previous {
		if prev[i], err = parseKey(s); err != nil {
			return nil, fmt.Errorf("%s (value %d of %d): %w", flagPreviousKey, i+1, len(previous), err)
		}
	}
	return New(cur, prev...)
}

// keyIDLen is the number of bytes of the key id in a ciphertext.
const keyIDLen = 8

type keyID [keyIDLen]byte

func idOf(key []byte) keyID {
	sum := sha256.Sum256(key)
	return keyID(sum[:keyIDLen])
}

func (id keyID) String() string { return hex.EncodeToString(id[:]) }
