package storecontract

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
)

// vaultCases: a run's sealed secrets are stored with it, read by the claimer in order,
// and deleted by the terminal transition (SPEC §7.2).
func vaultCases() map[string]func(*testing.T, *env) {
	withSecrets := func(r *runs.Record) {
		r.Config, r.ConfigSealed = "c2VhbGVk", true
		r.Secrets = [][]byte{[]byte("zero\x00\xff"), []byte("one")}
	}
	return map[string]func(*testing.T, *env){
		"sealed secrets are kept until the run finishes": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL, withSecrets)
			require.True(t, c.Sealed)
			require.Equal(t, "c2VhbGVk", c.Config)
			got, err := e.s.SealedSecrets(e.ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, [][]byte{[]byte("zero\x00\xff"), []byte("one")}, got)

			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch},
				cluster.Outcome{Status: "completed"}, nil))
			got, err = e.s.SealedSecrets(e.ctx, c.ID)
			require.NoError(t, err)
			require.Empty(t, got, "deleted in the terminal transition")
			require.Equal(t, "c2VhbGVk", e.get(t, c.ID).Config, "the sealed config stays")
		},
		"a cancelled queued run loses its secrets": func(t *testing.T, e *env) {
			r := e.create(t, rec("p", withSecrets))
			_, ok, err := e.s.CancelQueued(e.ctx, r.ID, nil)
			require.NoError(t, err)
			require.True(t, ok)
			got, err := e.s.SealedSecrets(e.ctx, r.ID)
			require.NoError(t, err)
			require.Empty(t, got)
		},
		"rewrap re-seals every sealed row": func(t *testing.T, e *env) {
			r := e.create(t, rec("p", withSecrets))
			plain := e.create(t, rec("q"))
			require.NoError(t, e.s.AddTemplate(e.ctx, &templates.Template{ID: "t", Config: "c2VhbGVk", ConfigSealed: true,
				CreatedBy: "a", CreatedAt: time.Now()}))
			var seen []string
			n, err := e.s.Rewrap(e.ctx, func(_ context.Context, owner string, p runs.Purpose, ct []byte) ([]byte, bool, error) {
				seen = append(seen, owner+"/"+string(p))
				return append(ct, '!'), true, nil
			})
			require.NoError(t, err)
			require.Equal(t, 4, n)
			require.ElementsMatch(t, []string{r.ID + "/config", r.ID + "/secret:0", r.ID + "/secret:1", "t/template"}, seen)
			require.Equal(t, base64.StdEncoding.EncodeToString([]byte("sealed!")), e.get(t, r.ID).Config)
			require.Equal(t, "version: 1\nname: q\n", e.get(t, plain.ID).Config, "clear configs are left alone")
			got, err := e.s.SealedSecrets(e.ctx, r.ID)
			require.NoError(t, err)
			require.Equal(t, []byte("one!"), got[1])
			tpl, err := e.s.LatestTemplate(e.ctx, "t")
			require.NoError(t, err)
			require.Equal(t, base64.StdEncoding.EncodeToString([]byte("sealed!")), tpl.Config)

			n, err = e.s.Rewrap(e.ctx, func(context.Context, string, runs.Purpose, []byte) ([]byte, bool, error) {
				return nil, false, nil
			})
			require.NoError(t, err)
			require.Zero(t, n, "unchanged rows are not written")
			_, err = e.s.Rewrap(e.ctx, func(context.Context, string, runs.Purpose, []byte) ([]byte, bool, error) {
				return nil, false, runs.ErrVaultTampered
			})
			require.ErrorIs(t, err, runs.ErrVaultTampered)
		},
		"a run without secrets has none": func(t *testing.T, e *env) {
			r := e.create(t, rec("p"))
			got, err := e.s.SealedSecrets(e.ctx, r.ID)
			require.NoError(t, err)
			require.Empty(t, got)
		},
	}
}
