package vaultcontract

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// seals is how many ciphertexts the nonce case makes, over workers goroutines.
const (
	seals   = 10_000
	workers = 8
)

func concurrencyCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"nonces never repeat across 10,000 concurrent seals, and all open": func(t *testing.T, e *env) {
			s, _ := e.sealer(t)
			pt := []byte(secretText)
			cts := make([][]byte, seals)
			errs := make([]error, seals)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := w; i < seals; i += workers {
						cts[i], errs[i] = s.Seal(e.ctx, owner, purpose, pt)
					}
				})
			}
			wg.Wait()
			nonces := make(map[string]int, seals)
			for i, ct := range cts {
				require.NoError(t, errs[i])
				require.Greater(t, len(ct), e.h.Nonce.To)
				n := string(ct[e.h.Nonce.From:e.h.Nonce.To])
				prev, dup := nonces[n]
				require.False(t, dup, "seals %d and %d share a nonce", prev, i)
				nonces[n] = i
			}
			require.Equal(t, secretText, string(pt), "Seal changed the shared plaintext")

			mismatch := make([]error, seals)
			for w := range workers {
				wg.Go(func() {
					for i := w; i < seals; i += workers {
						got, err := s.Open(e.ctx, owner, purpose, cts[i])
						switch {
						case err != nil:
							mismatch[i] = err
						case !bytes.Equal(got, pt):
							mismatch[i] = fmt.Errorf("ciphertext %d opened to other bytes", i)
						}
					}
				})
			}
			wg.Wait()
			for _, err := range mismatch {
				require.NoError(t, err)
			}
		},
	}
}
