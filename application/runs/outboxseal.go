package runs

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// SealedOutboxURL is the url column of an outbox row sealed under a vault key (SPEC
// §14.1): its real URL — which may carry credentials — and its payload travel together
// in the payload column as one ciphertext bound to the run, opened only by the member
// that delivers it. A callback URL is always http or https, so no real row has it.
const SealedOutboxURL = "sealed:"

// outboxEnvelope is what a sealed outbox row holds.
type outboxEnvelope struct {
	URL     string          `json:"url"`
	Payload json.RawMessage `json:"payload"`
}

// sealOutbox seals a callback's URL and payload for run runID. A sealer without a key
// (KeyID "") seals nothing: the server has no vault key and keeps the row as it is.
func sealOutbox(sealer Sealer, runID, url string, payload []byte) (string, []byte, error) {
	if sealer == nil || sealer.KeyID() == "" {
		return url, payload, nil
	}
	plain, err := json.Marshal(outboxEnvelope{URL: url, Payload: payload})
	if err != nil {
		return "", nil, fmt.Errorf("encode the callback of run %s: %w", runID, err)
	}
	ct, err := sealer.Seal(context.Background(), runID, PurposeOutbox, plain)
	if err != nil {
		return "", nil, fmt.Errorf("seal the callback of run %s: %w", runID, err)
	}
	return SealedOutboxURL, []byte(base64.StdEncoding.EncodeToString(ct)), nil
}

// OpenOutbox returns the URL and payload of an outbox row of run runID, opening a sealed
// row with sealer; a row stored in clear is returned as it is. A member without the key
// gets *VaultKeyMissingError: another member may have it, so the delivery is retried.
func OpenOutbox(ctx context.Context, sealer Sealer, runID, url string, payload []byte) (string, []byte, error) {
	if url != SealedOutboxURL {
		return url, payload, nil
	}
	ct, err := base64.StdEncoding.DecodeString(string(payload))
	if err != nil {
		return "", nil, fmt.Errorf("the sealed callback of run %s is not base64: %w", runID, ErrVaultTampered)
	}
	if sealer == nil {
		return "", nil, &VaultKeyMissingError{KeyID: "(unknown: this member has no vault key)"}
	}
	plain, err := sealer.Open(ctx, runID, PurposeOutbox, ct)
	if err != nil {
		return "", nil, err
	}
	var env outboxEnvelope
	if err := json.Unmarshal(plain, &env); err != nil {
		return "", nil, fmt.Errorf("the sealed callback of run %s is not JSON: %w", runID, ErrVaultTampered)
	}
	return env.URL, env.Payload, nil
}
