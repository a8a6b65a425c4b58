package vaultcontract

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

var errReturnedPlaintext = errors.New("Open failed but returned plaintext")

func tamperCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"every byte changed": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			ct := e.seal(t, s, owner, purpose, []byte(secretText))
			require.Less(t, e.h.Nonce.To, len(ct), "the ciphertext ends after its nonce")
			for i := range ct {
				for _, mask := range []byte{0x01, 0x80, 0xff} {
					err := openErr(e, s, owner, purpose, flip(ct, i, mask))
					if in(e.h.KeyID, i) {
						keyMissing(t, err, "", "byte %d ^ %#x", i, mask)
						var missing *runs.VaultKeyMissingError
						require.ErrorAs(t, err, &missing)
						require.NotEqual(t, s.KeyID(), missing.KeyID, "byte %d: names the id it read", i)
						continue
					}
					tampered(t, err, "byte %d ^ %#x", i, mask)
				}
			}
			require.Equal(t, secretText, string(e.open(t, s, owner, purpose, ct)), "the original still opens")
		},
		"every truncation and an extension": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			ct := e.seal(t, s, owner, purpose, []byte(secretText))
			for n := range len(ct) {
				tampered(t, openErr(e, s, owner, purpose, ct[:n]), "first %d of %d bytes", n, len(ct))
				// A tail that happens to start like a header reads as some unknown key's
				// ciphertext, so either failure is right — but it must fail, leaking nothing.
				err := openErr(e, s, owner, purpose, ct[len(ct)-n:])
				require.True(t, isVaultError(err), "last %d of %d bytes: %v", n, len(ct), err)
				noLeakInError(t, err)
			}
			tampered(t, openErr(e, s, owner, purpose, nil), "nil")
			tampered(t, openErr(e, s, owner, purpose, append(bytes.Clone(ct), 0)), "a byte appended")
			tampered(t, openErr(e, s, owner, purpose, append(bytes.Clone(ct), ct...)), "doubled")
		},
		"another owner or purpose": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			ct := e.seal(t, s, "run-1", runs.PurposeConfig, []byte(secretText))
			for _, b := range []struct {
				o string
				p runs.Purpose
			}{
				{"run-2", runs.PurposeConfig},
				{"run-1 ", runs.PurposeConfig},
				{"RUN-1", runs.PurposeConfig},
				{"run-1", runs.PurposeSecret},
				{"run-1", runs.PurposeCallback},
				{"run-1", "config "},
				// The binding is unambiguous: bytes cannot move between owner and purpose.
				{"run-1c", "onfig"},
				{"run-", "1config"},
			} {
				tampered(t, openErr(e, s, b.o, b.p, ct), "owner %q purpose %q", b.o, b.p)
			}
		},
		"secrets cannot be swapped between indexes or owners": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			zero := e.seal(t, s, "run-1", runs.SecretPurpose(0), []byte("zero "+secretText))
			one := e.seal(t, s, "run-1", runs.SecretPurpose(1), []byte("one "+secretText))
			other := e.seal(t, s, "run-2", runs.SecretPurpose(0), []byte("other "+secretText))
			tampered(t, openErr(e, s, "run-1", runs.SecretPurpose(0), one))
			tampered(t, openErr(e, s, "run-1", runs.SecretPurpose(1), zero))
			tampered(t, openErr(e, s, "run-1", runs.SecretPurpose(0), other))
			tampered(t, openErr(e, s, "run-2", runs.SecretPurpose(0), zero))
		},
		"spliced ciphertexts": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			a := e.seal(t, s, owner, purpose, []byte("a "+secretText))
			b := e.seal(t, s, owner, purpose, []byte("b "+secretText))
			require.Len(t, b, len(a))
			cut := e.h.Nonce.To
			tampered(t, openErr(e, s, owner, purpose, append(bytes.Clone(a[:cut]), b[cut:]...)), "a's nonce, b's body")
			// Four bytes, so the tails differ but for a 2^-32 chance.
			tail := len(a) - 4
			tampered(t, openErr(e, s, owner, purpose, append(bytes.Clone(a[:tail]), b[tail:]...)), "b's last bytes")
		},
		"the id of another known key": func(t *testing.T, e *env) {
			oldKey, newKey := newKey(t), newKey(t)
			s := e.h.New(t, newKey, oldKey)
			old := e.seal(t, e.h.New(t, oldKey), owner, purpose, []byte(secretText))
			cur := e.seal(t, s, owner, purpose, []byte(secretText))
			r := e.h.KeyID
			relabelled := bytes.Clone(old)
			copy(relabelled[r.From:r.To], cur[r.From:r.To])
			// The id is authenticated: naming a key this member has does not make another
			// key's ciphertext open, and it is no missing key either.
			tampered(t, openErr(e, s, owner, purpose, relabelled))
		},
	}
}
