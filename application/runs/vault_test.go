package runs_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/secret"
)

// fakeSealer binds owner and purpose and scrambles the plaintext, so a test can tell a
// sealed value from a clear one and a moved ciphertext fails like a real vault's.
type fakeSealer struct{ id string }

func (f fakeSealer) Seal(_ context.Context, owner string, purpose runs.Purpose, pt []byte) ([]byte, error) {
	out := []byte(f.id + "|" + owner + "|" + string(purpose) + "|")
	for _, c := range pt {
		out = append(out, c^0x5a)
	}
	return out, nil
}

func (f fakeSealer) Open(_ context.Context, owner string, purpose runs.Purpose, ct []byte) ([]byte, error) {
	head := []byte(f.id + "|" + owner + "|" + string(purpose) + "|")
	if !bytes.HasPrefix(ct, head) {
		if !bytes.HasPrefix(ct, []byte(f.id+"|")) {
			return nil, &runs.VaultKeyMissingError{KeyID: string(ct[:bytes.IndexByte(ct, '|')])}
		}
		return nil, runs.ErrVaultTampered
	}
	out := make([]byte, 0, len(ct)-len(head))
	for _, c := range ct[len(head):] {
		out = append(out, c^0x5a)
	}
	return out, nil
}

func (f fakeSealer) KeyID() string  { return f.id }
func (f fakeSealer) FormatMax() int { return 1 }

const secretConfig = `version: 1
name: orders
pipeline:
  source:
    type: gen
    config:
      count: 10
  sink:
    type: db
    config:
      connection_url: "postgres://app:${param.pw}@db/wh?again=${param.pw}"
      table_name: "orders_${param.region}"
params:
  region: { type: string, default: eu }
  pw: { type: string, secret: true, required: true }
`

const thePassword = "pa$$-w0rd-\"quoted\""

func TestSecretParamsAreTokenizedAndSealed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Sealer = fakeSealer{id: "k1"} }))
	r := req(operator, secretConfig)
	r.Params = map[string]string{"pw": thePassword, "region": "us"}
	res := h.submit(t, r)
	rec, err := h.store.Get(context.Background(), res.RunID)
	require.NoError(t, err)
	require.True(t, rec.ConfigSealed)
	require.NotContains(t, rec.Config, "pa$$", "the stored config is sealed")
	require.NotContains(t, rec.Config, "orders_us", "the whole config is sealed, not only secrets")
	require.Len(t, h.store.secrets(rec.ID), 1)
	require.NotContains(t, string(h.store.secrets(rec.ID)[0]), "w0rd")

	// What the claimer loads: opened, tokens restored, the secret registered.
	reg := &redactor{}
	text, err := runs.OpenRun(context.Background(), fakeSealer{id: "k1"}, reg, rec.ID, rec.Config, true, h.store.secrets(rec.ID))
	require.NoError(t, err)
	require.Contains(t, text, `postgres://app:pa$$-w0rd-\"quoted\"@db/wh?again=pa$$-w0rd-\"quoted\"`)
	require.Contains(t, text, "orders_us")
	require.NotContains(t, text, "params")
	require.Contains(t, reg.values, thePassword)

	// The config view opens it but shows tokens only.
	view, err := h.svc.Config(context.Background(), operator, rec.ID)
	require.NoError(t, err)
	require.Contains(t, view, "${sealed:0}")
	require.NotContains(t, view, "w0rd")
}

func TestOpenRunFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Sealer = fakeSealer{id: "k1"} }))
	r := req(operator, secretConfig)
	r.Params = map[string]string{"pw": thePassword}
	rec, err := h.store.Get(context.Background(), h.submit(t, r).RunID)
	require.NoError(t, err)
	ctx := context.Background()

	_, err = runs.OpenRun(ctx, fakeSealer{id: "k2"}, nil, rec.ID, rec.Config, true, h.store.secrets(rec.ID))
	var missing *runs.VaultKeyMissingError
	require.ErrorAs(t, err, &missing, "another key")
	require.Equal(t, "k1", missing.KeyID)

	_, err = runs.OpenRun(ctx, nil, nil, rec.ID, rec.Config, true, h.store.secrets(rec.ID))
	require.ErrorIs(t, err, runs.ErrVaultKeyMissing, "no key at all")

	_, err = runs.OpenRun(ctx, fakeSealer{id: "k1"}, nil, "another-run", rec.Config, true, h.store.secrets(rec.ID))
	require.ErrorIs(t, err, runs.ErrVaultTampered, "moved to another run")

	_, err = runs.OpenRun(ctx, fakeSealer{id: "k1"}, nil, rec.ID, rec.Config, true, nil)
	require.ErrorIs(t, err, secret.ErrUnknownToken, "secrets gone: the tokens are never run")
}

func TestSecretParamRefusals(t *testing.T) {
	t.Parallel()
	noKey := newHarness(t)
	r := req(operator, secretConfig)
	r.Params = map[string]string{"pw": thePassword}
	_, err := noKey.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, runs.ErrVaultKeyRequired)
	require.Contains(t, err.Error(), "--vault-key")
	require.Zero(t, noKey.store.count(), "nothing stored")

	keyed := newHarness(t, withDeps(func(d *runs.Deps) { d.Sealer = fakeSealer{id: "k1"} }))
	r.Params = map[string]string{"pw": "abc"}
	_, err = keyed.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, secret.ErrTooShort)
	require.Contains(t, err.Error(), "params.pw")
	require.NotContains(t, err.Error(), "abc")

	r.Config = []byte(strings.Replace(secretConfig, "count: 10", "count: 10\n      note: \"${sealed:0}\"", 1))
	r.Params = map[string]string{"pw": thePassword}
	_, err = keyed.svc.Submit(context.Background(), r)
	require.Error(t, err, "a submitted config cannot carry tokens")
}

func TestReplayDoesNotReseal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Sealer = fakeSealer{id: "k1"} }))
	r := req(operator, secretConfig)
	r.Params = map[string]string{"pw": thePassword}
	r.IdempotencyKey = "once"
	first := h.submit(t, r)
	before, err := h.store.Get(context.Background(), first.RunID)
	require.NoError(t, err)
	again := h.submit(t, r)
	require.True(t, again.Replayed)
	require.Equal(t, first.RunID, again.RunID)
	require.Equal(t, 1, h.store.count(), "no second run, no second sealing stored")
	after, err := h.store.Get(context.Background(), first.RunID)
	require.NoError(t, err)
	require.Equal(t, before.Config, after.Config)
}

func TestNoKeyStoresConfigsAsSubmitted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rec, err := h.store.Get(context.Background(), h.submit(t, req(operator, baseConfig)).RunID)
	require.NoError(t, err)
	require.False(t, rec.ConfigSealed)
	require.Equal(t, baseConfig, rec.Config)
	require.False(t, errors.Is(err, runs.ErrVaultTampered))
}

func TestCallbackSettingsAreSealed(t *testing.T) {
	t.Parallel()
	sealer := fakeSealer{id: "k1"}
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Sealer = sealer }))
	r := req(operator, baseConfig)
	r.Callback = &runs.Callback{URL: "https://hooks.example.com/done?sig=abc123", On: []string{"completed"}}
	rec, err := h.store.Get(context.Background(), h.submit(t, r).RunID)
	require.NoError(t, err)
	require.NotNil(t, rec.Callback)
	require.Empty(t, rec.Callback.URL, "only the ciphertext is stored")
	require.NotContains(t, rec.Callback.Sealed, "hooks.example.com")

	in := runs.CallbackInput{RunID: rec.ID, Name: "orders", Status: "completed", Callback: rec.Callback}
	url, payload, ok := runs.CallbackBuilderFor(sealer)(in)
	require.True(t, ok)
	require.Equal(t, runs.SealedOutboxURL, url, "the outbox row is sealed too (SPEC §14.1)")
	url, _, err = runs.OpenOutbox(context.Background(), sealer, rec.ID, url, payload)
	require.NoError(t, err)
	require.Equal(t, "https://hooks.example.com/done?sig=abc123", url)

	in.RunID = "another-run"
	_, _, ok = runs.CallbackBuilderFor(sealer)(in)
	require.False(t, ok, "a callback moved to another run does not open")
	_, _, ok = runs.CallbackBuilderFor(nil)(runs.CallbackInput{RunID: rec.ID, Status: "completed", Callback: rec.Callback})
	require.False(t, ok, "no key, no callback")
}
