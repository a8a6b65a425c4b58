package vaultcontract

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

// Sealer is what the suite checks: the port, and Rewrap.
type Sealer interface {
	runs.Sealer
	// Rewrap re-seals ciphertext under the current key for the same owner and purpose;
	// changed is false (and the bytes are returned as given) when it already was.
	Rewrap(ctx context.Context, owner string, purpose runs.Purpose, ciphertext []byte) ([]byte, bool, error)
}

// Range is a byte range [From, To) of a ciphertext.
type Range struct{ From, To int }

// Harness is what the suite needs of one sealer adapter.
type Harness struct {
	// New returns a sealer that seals under current and also opens what any of previous
	// sealed. Keys are 32 random bytes.
	New func(t *testing.T, current []byte, previous ...[]byte) Sealer
	// KeyID is where a ciphertext names its key. A changed byte there must read as a key
	// this sealer does not have (ErrVaultKeyMissing); a changed byte anywhere else as
	// tampering (ErrVaultTampered).
	KeyID Range
	// Nonce is where a ciphertext carries its nonce; the suite checks nonces never repeat.
	Nonce Range
}

// Run runs every case against h.
func Run(t *testing.T, h Harness) {
	t.Helper()
	require.NotNil(t, h.New, "Harness.New")
	require.Less(t, h.KeyID.From, h.KeyID.To, "Harness.KeyID")
	require.Less(t, h.Nonce.From, h.Nonce.To, "Harness.Nonce")
	groups := []struct {
		name  string
		cases map[string]func(*testing.T, *env)
	}{
		{"seal", sealCases()},
		{"tamper", tamperCases()},
		{"rotation", rotationCases()},
		{"concurrency", concurrencyCases()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for name, c := range g.cases {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					c(t, &env{h: h, ctx: t.Context()})
				})
			}
		})
	}
}

// secretText is in every plaintext the suite seals, so a leak into a ciphertext or an
// error message is found by looking for it.
const secretText = "hunter2-SECRET-7f3a9c"

// The binding most cases seal under.
const (
	owner   = "01J9ZQ4V8K3N2M5P7R9T1W3Y5A"
	purpose = runs.PurposeConfig
)

type env struct {
	h   Harness
	ctx context.Context
}

func newKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, 32)
	_, err := rand.Read(k)
	require.NoError(t, err)
	return k
}

// sealer is a sealer with a fresh key, and that key.
func (e *env) sealer(t *testing.T) (Sealer, []byte) {
	t.Helper()
	k := newKey(t)
	return e.h.New(t, k), k
}

func (e *env) seal(t *testing.T, s Sealer, o string, p runs.Purpose, plaintext []byte) []byte {
	t.Helper()
	ct, err := s.Seal(e.ctx, o, p, plaintext)
	require.NoError(t, err)
	noLeakInCiphertext(t, ct)
	return ct
}

func (e *env) open(t *testing.T, s Sealer, o string, p runs.Purpose, ct []byte) []byte {
	t.Helper()
	pt, err := s.Open(e.ctx, o, p, ct)
	require.NoError(t, err)
	return pt
}

// tampered asserts err is tampering (and not a missing key) and leaks nothing.
func tampered(t *testing.T, err error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.ErrorIs(t, err, runs.ErrVaultTampered, msgAndArgs...)
	require.NotErrorIs(t, err, runs.ErrVaultKeyMissing, msgAndArgs...)
	noLeakInError(t, err)
}

// keyMissing asserts err names a missing key, that key id, and leaks nothing.
func keyMissing(t *testing.T, err error, id string, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.ErrorIs(t, err, runs.ErrVaultKeyMissing, msgAndArgs...)
	require.NotErrorIs(t, err, runs.ErrVaultTampered, msgAndArgs...)
	var missing *runs.VaultKeyMissingError
	require.ErrorAs(t, err, &missing, msgAndArgs...)
	if id != "" {
		require.Equal(t, id, missing.KeyID, msgAndArgs...)
	}
	require.NotEmpty(t, missing.KeyID, msgAndArgs...)
	require.Contains(t, err.Error(), missing.KeyID, msgAndArgs...)
	noLeakInError(t, err)
}

// noLeakInError: an error message never holds the secret, in any common encoding.
func noLeakInError(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	for _, form := range []string{
		secretText,
		hex.EncodeToString([]byte(secretText)),
		base64.StdEncoding.EncodeToString([]byte(secretText)),
	} {
		require.NotContains(t, msg, form, "the error message holds the plaintext")
	}
}

// noLeakInCiphertext: no 8-byte window of the secret shows in a ciphertext (by chance
// that happens about once in 2^64 windows).
func noLeakInCiphertext(t *testing.T, ct []byte) {
	t.Helper()
	for i := 0; i+8 <= len(secretText); i++ {
		require.False(t, bytes.Contains(ct, []byte(secretText[i:i+8])), "the ciphertext holds plaintext %q", secretText[i:i+8])
	}
}

func flip(ct []byte, i int, mask byte) []byte {
	out := bytes.Clone(ct)
	out[i] ^= mask
	return out
}

func in(r Range, i int) bool { return i >= r.From && i < r.To }

func isVaultError(err error) bool {
	return errors.Is(err, runs.ErrVaultTampered) || errors.Is(err, runs.ErrVaultKeyMissing)
}
