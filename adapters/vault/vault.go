package vault

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"

	"github.com/sluicehq/sluice/application/runs"
)

// The layout of format 1 (see the package doc).
const (
	format1   byte = 1
	headerLen      = 1 + keyIDLen // version and key id: the part read before any key is chosen
	nonceLen       = 12
	tagLen         = 16
	// Overhead is how many bytes a ciphertext has beyond its plaintext.
	Overhead = headerLen + nonceLen + tagLen
	// FormatMax is the newest (and only) ciphertext format this package writes and opens.
	FormatMax = int(format1)
)

var _ runs.Sealer = (*Vault)(nil)

// Vault seals with the current key and opens with any key it was given. It is immutable
// after New and safe for concurrent use.
type Vault struct {
	current *key
	keys    map[keyID]*key // current and previous keys by id
}

type key struct {
	id   keyID
	aead cipher.AEAD // GCM with a random nonce per Seal, which it prepends to its output
}

// New builds a Vault that seals with current and also opens what any of previous sealed
// (rotation, SPEC §7.5). Every key must be KeySize bytes; the error names the flag. A
// previous key equal to the current one, or listed twice, is harmless.
// The Vault keeps no copy of the key bytes.
func New(current []byte, previous ...[]byte) (*Vault, error) {
	cur, err := newKey(current)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagKey, err)
	}
	v := &Vault{current: cur, keys: map[keyID]*key{cur.id: cur}}
	for i, p := range previous {
		k, err := newKey(p)
		if err != nil {
			return nil, fmt.Errorf("%s (value %d of %d): %w", flagPreviousKey, i+1, len(previous), err)
		}
		// An id is a digest of its key, so a key listed twice (or the current key listed
		// as previous too, as operators do mid-rotation) lands on its own entry.
		v.keys[k.id] = k
	}
	return v, nil
}

func newKey(raw []byte) (*key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("a vault key is %d bytes, got %d: run `sluice keygen` to make one", KeySize, len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("build the AES cipher: %w", err)
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, fmt.Errorf("build the GCM mode: %w", err)
	}
	return &key{id: idOf(raw), aead: aead}, nil
}

// KeyID is the id of the current key: 16 hex digits.
func (v *Vault) KeyID() string { return v.current.id.String() }

// FormatMax is the newest ciphertext format this Vault opens.
func (v *Vault) FormatMax() int { return FormatMax }

// String and LogValue show only the key id, so printing or logging a Vault by mistake
// cannot leak anything of the keys.
func (v *Vault) String() string { return "vault(key " + v.KeyID() + ")" }

// LogValue implements slog.LogValuer; see String.
func (v *Vault) LogValue() slog.Value { return slog.StringValue(v.String()) }

// Seal encrypts plaintext under the current key, bound to owner and purpose. A random
// 96-bit nonce per call keeps nonce reuse negligible below 2^32 seals per key, far beyond
// what one history holds between rotations.
func (v *Vault) Seal(_ context.Context, owner string, purpose runs.Purpose, plaintext []byte) ([]byte, error) {
	if err := checkBinding(owner, purpose); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	out := make([]byte, headerLen, Overhead+len(plaintext))
	out[0] = format1
	copy(out[1:headerLen], v.current.id[:])
	return v.current.aead.Seal(out, nil, plaintext, additionalData(out[:headerLen], owner, purpose)), nil
}

// Open decrypts a ciphertext sealed for owner and purpose by any key this Vault knows.
// Errors: *runs.VaultKeyMissingError for a key id it does not know, runs.ErrVaultTampered
// for everything else that does not authenticate (see runs.Sealer).
func (v *Vault) Open(_ context.Context, owner string, purpose runs.Purpose, ciphertext []byte) ([]byte, error) {
	if err := checkBinding(owner, purpose); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	k, err := v.keyOf(ciphertext)
	if err != nil {
		return nil, fmt.Errorf("open the sealed %s of %s: %w", purpose, owner, err)
	}
	plaintext, err := k.aead.Open(nil, nil, ciphertext[headerLen:], additionalData(ciphertext[:headerLen], owner, purpose))
	if err != nil {
		// GCM does not say why; the reason is one of the tampered cases the sentinel lists.
		return nil, fmt.Errorf("open the sealed %s of %s: %w", purpose, owner, runs.ErrVaultTampered)
	}
	if plaintext == nil {
		plaintext = []byte{}
	}
	return plaintext, nil
}

// Rewrap re-seals ciphertext under the current key for the same owner and purpose
// (`sluice vault rewrap`, SPEC §7.1). A ciphertext already under the current key in the
// newest format comes back unchanged with changed false — after it was opened, so a
// rewrap pass also finds tampered rows. Errors are those of Open.
func (v *Vault) Rewrap(ctx context.Context, owner string, purpose runs.Purpose, ciphertext []byte) ([]byte, bool, error) {
	plaintext, err := v.Open(ctx, owner, purpose, ciphertext)
	if err != nil {
		return nil, false, err
	}
	defer clear(plaintext)
	if ciphertext[0] == format1 && bytes.Equal(ciphertext[1:headerLen], v.current.id[:]) {
		return ciphertext, false, nil
	}
	out, err := v.Seal(ctx, owner, purpose, plaintext)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// keyOf reads the header and returns the key the ciphertext names. The length is checked
// before the key id, so a truncated ciphertext is tampering, never a missing key.
func (v *Vault) keyOf(ciphertext []byte) (*key, error) {
	if len(ciphertext) == 0 {
		return nil, fmt.Errorf("%w: the ciphertext is empty", runs.ErrVaultTampered)
	}
	if ciphertext[0] != format1 {
		return nil, fmt.Errorf("%w: unknown format version %d (this member opens formats up to %d)",
			runs.ErrVaultTampered, ciphertext[0], FormatMax)
	}
	if len(ciphertext) < Overhead {
		return nil, fmt.Errorf("%w: the ciphertext is truncated (%d bytes, at least %d)",
			runs.ErrVaultTampered, len(ciphertext), Overhead)
	}
	id := keyID(ciphertext[1:headerLen])
	k, ok := v.keys[id]
	if !ok {
		return nil, &runs.VaultKeyMissingError{KeyID: id.String()}
	}
	return k, nil
}

// additionalData is the header followed by owner and purpose, each prefixed with its
// length: without the prefixes, owner "run-1" with purpose "config" and owner "run-1c"
// with purpose "onfig" would authenticate the same bytes.
func additionalData(header []byte, owner string, purpose runs.Purpose) []byte {
	ad := make([]byte, 0, len(header)+2*binary.MaxVarintLen64+len(owner)+len(purpose))
	ad = append(ad, header...)
	ad = binary.AppendUvarint(ad, uint64(len(owner)))
	ad = append(ad, owner...)
	ad = binary.AppendUvarint(ad, uint64(len(purpose)))
	return append(ad, purpose...)
}

// checkBinding refuses an empty owner or purpose: every sealed part belongs to one id and
// has one use, and an empty one is a caller's bug that would let ciphertexts be swapped.
func checkBinding(owner string, purpose runs.Purpose) error {
	switch {
	case owner == "":
		return errors.New("the owner id is empty: every sealed value belongs to a run, template, change request or schedule")
	case purpose == "":
		return errors.New("the purpose is empty: say what the sealed value is (config, secret:N, callback, …)")
	}
	return nil
}
