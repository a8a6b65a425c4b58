package vaultcontract

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

func sealCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"round trip": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			big := bytes.Repeat([]byte(secretText+"\n"), (1<<20)/len(secretText))
			for name, pt := range map[string][]byte{
				"text":   []byte("password: " + secretText),
				"binary": append([]byte{0, 1, 2, 0xff, 0}, secretText...),
				"1 MiB":  big,
			} {
				ct := e.seal(t, s, owner, purpose, pt)
				require.Greater(t, len(ct), len(pt), name)
				require.Equal(t, pt, e.open(t, s, owner, purpose, ct), name)
			}
		},
		"empty plaintext round trips": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			for _, pt := range [][]byte{nil, {}} {
				ct := e.seal(t, s, owner, purpose, pt)
				got := e.open(t, s, owner, purpose, ct)
				require.Empty(t, got)
				tampered(t, openErr(e, s, "someone-else", purpose, ct), "an empty plaintext is bound too")
			}
		},
		"every purpose and secret index round trips": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			purposes := []runs.Purpose{
				runs.PurposeConfig, runs.PurposeSecret, runs.PurposeCallback, runs.PurposeTemplate,
				runs.PurposeChangeRequest, runs.PurposeScheduleParams,
				runs.SecretPurpose(0), runs.SecretPurpose(1), runs.SecretPurpose(12),
			}
			for _, p := range purposes {
				pt := []byte(string(p) + " " + secretText)
				require.Equal(t, pt, e.open(t, s, owner, p, e.seal(t, s, owner, p, pt)), p)
			}
		},
		"seal and open neither keep nor change their inputs": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			pt := []byte(secretText)
			ct := e.seal(t, s, owner, purpose, pt)
			require.Equal(t, secretText, string(pt), "Seal changed its plaintext")
			pt[0] ^= 0xff // the caller wipes or reuses its buffer
			kept := bytes.Clone(ct)
			got := e.open(t, s, owner, purpose, ct)
			require.Equal(t, kept, ct, "Open changed its ciphertext")
			require.Equal(t, secretText, string(got))
			got[0] ^= 0xff
			require.Equal(t, secretText, string(e.open(t, s, owner, purpose, ct)), "Open returned a shared slice")
		},
		"the same plaintext seals differently every time": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			a := e.seal(t, s, owner, purpose, []byte(secretText))
			b := e.seal(t, s, owner, purpose, []byte(secretText))
			require.NotEqual(t, a, b)
			require.NotEqual(t, a[e.h.Nonce.From:e.h.Nonce.To], b[e.h.Nonce.From:e.h.Nonce.To])
		},
		"key ids are stable per key and reveal nothing": func(t *testing.T, e *env) {
			k := newKey(t)
			a, b := e.h.New(t, k), e.h.New(t, k)
			other, _ := e.sealer(t)
			require.NotEmpty(t, a.KeyID())
			require.Equal(t, a.KeyID(), b.KeyID(), "two members with one key name it alike")
			require.NotEqual(t, a.KeyID(), other.KeyID())
			require.GreaterOrEqual(t, a.FormatMax(), 1)
			for _, form := range []string{hex.EncodeToString(k), base64.StdEncoding.EncodeToString(k), base64.RawURLEncoding.EncodeToString(k)} {
				for i := 0; i+8 <= len(form); i++ {
					require.NotContains(t, a.KeyID(), form[i:i+8], "the key id shows key material")
				}
			}
		},
		"another member with the same key opens": func(t *testing.T, e *env) {
			k := newKey(t)
			ct := e.seal(t, e.h.New(t, k), owner, purpose, []byte(secretText))
			require.Equal(t, secretText, string(e.open(t, e.h.New(t, k), owner, purpose, ct)))
		},
		"a key this member does not have is key missing, naming its id": func(t *testing.T, e *env) {
			a, _ := e.sealer(t)
			b, _ := e.sealer(t)
			ct := e.seal(t, a, owner, purpose, []byte(secretText))
			err := openErr(e, b, owner, purpose, ct)
			keyMissing(t, err, a.KeyID())
			_, changed, err := b.Rewrap(e.ctx, owner, purpose, ct)
			keyMissing(t, err, a.KeyID())
			require.False(t, changed)
		},
		"an empty owner or purpose is refused": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			ct := e.seal(t, s, owner, purpose, []byte(secretText))
			for name, b := range map[string]struct {
				o string
				p runs.Purpose
			}{"owner": {"", purpose}, "purpose": {owner, ""}, "both": {"", ""}} {
				out, err := s.Seal(e.ctx, b.o, b.p, []byte(secretText))
				require.Error(t, err, "seal, empty %s", name)
				require.Nil(t, out)
				require.False(t, isVaultError(err), "a caller's bug is no vault error: %v", err)
				noLeakInError(t, err)
				_, err = s.Open(e.ctx, b.o, b.p, ct)
				require.Error(t, err, "open, empty %s", name)
				require.False(t, isVaultError(err), "a caller's bug is no vault error: %v", err)
				noLeakInError(t, err)
			}
		},
	}
}

func openErr(e *env, s Sealer, o string, p runs.Purpose, ct []byte) error {
	pt, err := s.Open(e.ctx, o, p, ct)
	if err == nil {
		return nil
	}
	if pt != nil {
		// A failed Open must not hand back (partial) plaintext either.
		return errReturnedPlaintext
	}
	return err
}
