package runs

import (
	"context"
	"errors"
	"strconv"
)

// Purpose says what a ciphertext protects. The sealer binds it, with the owner id, into
// the additional authenticated data, so a ciphertext copied to another owner (another
// run, template or change request) or to another purpose of the same owner does not
// open (SPEC §7.1, §7.6).
type Purpose string

// The purposes of the sealed parts of the history.
const (
	PurposeConfig         Purpose = "config"          // the whole stored config of a run (§7.3)
	PurposeSecret         Purpose = "secret"          // one secret param value; see SecretPurpose
	PurposeCallback       Purpose = "callback"        // a run's callback settings
	PurposeTemplate       Purpose = "template"        // a template's config
	PurposeChangeRequest  Purpose = "change_request"  // a change request's config
	PurposeScheduleParams Purpose = "schedule_params" // a schedule's template params
	PurposeOutbox         Purpose = "outbox"          // a callback waiting in the outbox
)

// SecretPurpose is the purpose of the n-th secret value of an owner (the N of
// ${sealed:N}). Binding the index too means two sealed values of one run cannot be
// swapped without the swap failing to open as tampering.
func SecretPurpose(n int) Purpose { return PurposeSecret + ":" + Purpose(strconv.Itoa(n)) }

// Sealer encrypts and authenticates what the history keeps sealed (SPEC §7). The vault
// adapter implements it with AES-256-GCM; without a vault key the service has no Sealer
// and stores configs as submitted.
//
// Contract:
//   - Safe for concurrent use; Seal and Open never modify their input slices and return
//     fresh slices the caller owns.
//   - owner and purpose must both be non-empty; otherwise Seal and Open fail (a plain
//     error, neither sentinel below: it is a bug of the caller, not of the data).
//   - Seal uses the current key; every call uses a fresh nonce, so sealing the same
//     plaintext twice gives two different ciphertexts (no equality leaks).
//   - Open succeeds only with the owner and purpose given to Seal. It opens what any key
//     this member knows sealed (current or previous: rotation, §7.5).
//   - Open fails with an error that errors.Is ErrVaultKeyMissing (and errors.As a
//     *VaultKeyMissingError naming the key id) when the ciphertext names a key this member
//     does not have, and with ErrVaultTampered for anything else that does not
//     authenticate: a changed or truncated byte, another owner or purpose, an unknown
//     format version.
//   - No error message ever holds plaintext or key material.
//
// ctx is for sealers that call out (a KMS); the AES adapter does no I/O.
type Sealer interface {
	Seal(ctx context.Context, owner string, purpose Purpose, plaintext []byte) ([]byte, error)
	Open(ctx context.Context, owner string, purpose Purpose, ciphertext []byte) ([]byte, error)
	// KeyID is the id of the current key: stable for one key, the same on every member
	// started with it, and revealing nothing of the key.
	KeyID() string
	// FormatMax is the highest ciphertext format this sealer opens; a member advertises it
	// (member.VaultFormatMax) so nobody seals in a format a live peer cannot open.
	FormatMax() int
}

// The failures of Open. They are run error codes, not request refusals, so they are not
// in Errors(): the member that fails to open a claimed run's sealed parts ends the run
// with run.CodeVaultKeyMissing or run.CodeVaultTampered and never runs its tokens
// (SPEC §7.4, §7.6). A transport that meets them while opening a stored config for a
// request (GET …/config, rollback) reports the same codes.
var (
	// ErrVaultKeyMissing → run.CodeVaultKeyMissing. Returned as a *VaultKeyMissingError.
	ErrVaultKeyMissing = errors.New("vault key missing")
	// ErrVaultTampered → run.CodeVaultTampered.
	ErrVaultTampered = errors.New("sealed data failed authentication (changed, truncated, unknown format, or moved to another owner or purpose)")
)

// VaultKeyMissingError is a ciphertext sealed under a key this member was not started
// with. KeyID is the id the ciphertext names, the one to compare with the KeyID of each
// member's key (ids reveal nothing of a key). errors.Is(err, ErrVaultKeyMissing).
type VaultKeyMissingError struct {
	KeyID string
}

func (e *VaultKeyMissingError) Error() string {
	return "sealed with vault key id " + e.KeyID + ", which this member does not have: " +
		"start it with that key as --vault-key or --vault-previous-key (SLUICE_VAULT_KEY / SLUICE_VAULT_PREVIOUS_KEY)"
}

// Unwrap makes errors.Is(err, ErrVaultKeyMissing) true.
func (e *VaultKeyMissingError) Unwrap() error { return ErrVaultKeyMissing }
