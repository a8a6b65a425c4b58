package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// fingerprintInput is everything an idempotent replay must repeat (SPEC §2.4). The
// config enters as the canonical JSON of its RAW tree — directives unresolved, keys
// sorted, formatting gone — so the same document sent as YAML or JSON, in any key order,
// is the same request, and a changed environment does not make a replay a conflict.
// Empty and absent collections are the same (nil), and callback.on is sorted by
// checkCallback, so neither changes the fingerprint.
type fingerprintInput struct {
	Config      json.RawMessage   `json:"config"`
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels"`
	Pool        string            `json:"pool"`
	TimeoutSecs int               `json:"timeout_secs"`
	Callback    *Callback         `json:"callback"`
	Clock       string            `json:"clock"`
	Params      map[string]string `json:"params"`
	RunKey      string            `json:"run_key"`
	Retry       *Retry            `json:"retry,omitempty"` // absent keeps older fingerprints valid
}

// fingerprint hashes the request as the client sent it (name and pool as given, not as
// resolved), so a replay matches whatever the server's defaults have become since.
func fingerprint(canonicalConfig []byte, req SubmitRequest, cb *Callback) (string, error) {
	in := fingerprintInput{
		Config:      canonicalConfig,
		Name:        req.Name,
		Labels:      nilIfEmpty(req.Labels),
		Pool:        req.Pool,
		TimeoutSecs: req.TimeoutSecs,
		Callback:    cb,
		Params:      nilIfEmpty(req.Params),
		RunKey:      req.RunKey,
		Retry:       req.Retry,
	}
	if req.Clock != nil {
		in.Clock = req.Clock.UTC().Format(time.RFC3339Nano)
	}
	b, err := json.Marshal(in) // encoding/json writes map keys sorted: canonical
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
