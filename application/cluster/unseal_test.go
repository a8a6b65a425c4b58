package cluster_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// tagSealer prefixes a key id, owner and purpose; Open checks them like a vault would.
type tagSealer struct{ id string }

func (s tagSealer) Seal(_ context.Context, owner string, p runs.Purpose, pt []byte) ([]byte, error) {
	return append([]byte(s.id+"|"+owner+"|"+string(p)+"|"), pt...), nil
}

func (s tagSealer) Open(_ context.Context, owner string, p runs.Purpose, ct []byte) ([]byte, error) {
	key, _, _ := bytes.Cut(ct, []byte("|"))
	if string(key) != s.id {
		return nil, &runs.VaultKeyMissingError{KeyID: string(key)}
	}
	head := []byte(s.id + "|" + owner + "|" + string(p) + "|")
	if !bytes.HasPrefix(ct, head) {
		return nil, runs.ErrVaultTampered
	}
	return bytes.Clone(ct[len(head):]), nil
}
func (s tagSealer) KeyID() string  { return s.id }
func (s tagSealer) FormatMax() int { return 1 }

type secretsByRun map[string][][]byte

// downSecrets is a history that does not answer when the secrets are read.
type downSecrets struct{}

func (downSecrets) SealedSecrets(context.Context, string) ([][]byte, error) {
	return nil, fmt.Errorf("read: %w", run.ErrUnavailable)
}

func (m secretsByRun) SealedSecrets(_ context.Context, id string) ([][]byte, error) {
	return m[id], nil
}

func sealedClaim(t *testing.T, id, owner string) (cluster.Claimed, secretsByRun) {
	t.Helper()
	s := tagSealer{id: "k1"}
	ct, err := s.Seal(context.Background(), owner, runs.PurposeConfig, []byte(`{"dsn": "postgres://u:${sealed:0}@db/x"}`))
	require.NoError(t, err)
	sec, err := s.Seal(context.Background(), owner, runs.SecretPurpose(0), []byte("hunter2-long"))
	require.NoError(t, err)
	c := claimed(id)
	c.Config, c.Sealed = base64.StdEncoding.EncodeToString(ct), true
	return c, secretsByRun{id: {sec}}
}

func TestSealedRunsAreOpenedRestoredAndRegistered(t *testing.T) {
	t.Parallel()
	c, secrets := sealedClaim(t, "r1", "r1")
	store := newHistory(t)
	store.add(c)
	var mu sync.Mutex
	var loaded string
	loader := &fakeLoader{cfg: func(text string) (*pipeline.Config, error) {
		mu.Lock()
		loaded = text
		mu.Unlock()
		return &pipeline.Config{Version: 1, Name: "orders"}, nil
	}}
	h := start(t, store, &fakeRunner{fn: succeed(1)}, func(_ *cluster.Config, d *cluster.Deps) {
		d.Sealer, d.Secrets, d.Loader = tagSealer{id: "k1"}, secrets, loader
	})
	o := finished(t, store, "r1")
	require.Equal(t, string(run.Completed), o.Status, o.ErrorMessage)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, `{"dsn": "postgres://u:hunter2-long@db/x"}`, loaded)
	require.Equal(t, "x ***", h.red.Redact("x hunter2-long"), "the secret is registered")
}

// A history outage while reading the secrets is not the run's fault: it goes back to
// pending without spending an attempt instead of failing as tampered.
func TestSealedRunIsHandedBackWhenTheHistoryDoesNotAnswer(t *testing.T) {
	t.Parallel()
	c, _ := sealedClaim(t, "r1", "r1")
	store := newHistory(t)
	store.add(c)
	runner := &fakeRunner{fn: succeed(1)}
	start(t, store, runner, func(_ *cluster.Config, d *cluster.Deps) { d.Sealer, d.Secrets = tagSealer{id: "k1"}, downSecrets{} })
	store.until(t, func() bool { return store.handedBack("r1") }, "r1 handed back")
	_, ended := store.outcome("r1")
	require.False(t, ended, "not failed")
	require.Zero(t, runner.started.Load(), "the tokens never run")
}

func TestSealedRunFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		owner  string
		sealer runs.Sealer
		code   run.ErrorCode
		text   string
	}{
		{"another key", "r1", tagSealer{id: "k2"}, run.CodeVaultKeyMissing, "k1"},
		{"no key", "r1", nil, run.CodeVaultKeyMissing, "vault key"},
		{"moved to another run", "r0", tagSealer{id: "k1"}, run.CodeVaultTampered, "r1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, secrets := sealedClaim(t, "r1", tc.owner)
			store := newHistory(t)
			store.add(c)
			runner := &fakeRunner{fn: succeed(1)}
			start(t, store, runner, func(_ *cluster.Config, d *cluster.Deps) { d.Sealer, d.Secrets = tc.sealer, secrets })
			o := finished(t, store, "r1")
			require.Equal(t, string(run.Failed), o.Status)
			require.Equal(t, string(tc.code), o.ErrorCode)
			require.Contains(t, o.ErrorMessage, tc.text)
			require.NotContains(t, o.ErrorMessage, "hunter2")
			require.Zero(t, runner.started.Load(), "the tokens never run")
		})
	}
}
