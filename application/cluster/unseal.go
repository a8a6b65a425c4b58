package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// openClaimed is the config text a claimed run loads: opened when sealed, its
// ${sealed:N} tokens restored from the sealed secrets, which are registered with the
// redactor first (SPEC §7.2, §7.3). Every failure is a *run.Error with vault_key_missing
// (a key this member lacks, named by its id) or vault_tampered; the tokens never run.
func (m *Member) openClaimed(ctx context.Context, c Claimed) (string, error) {
	if !c.Sealed && !strings.Contains(c.Config, "${sealed:") {
		return c.Config, nil
	}
	var secrets [][]byte
	if strings.Contains(c.Config, "${sealed:") || c.Sealed {
		if m.deps.Secrets != nil {
			var err error
			if secrets, err = m.deps.Secrets.SealedSecrets(ctx, c.ID); err != nil {
				return "", fmt.Errorf("read the sealed secrets of run %s: %w", c.ID, err)
			}
		}
	}
	text, err := runs.OpenRun(ctx, m.deps.Sealer, m.deps.Redactor, c.ID, c.Config, c.Sealed, secrets)
	if err == nil {
		return text, nil
	}
	var missing *runs.VaultKeyMissingError
	if errors.As(err, &missing) {
		return "", &run.Error{Code: run.CodeVaultKeyMissing, Message: err.Error()}
	}
	return "", &run.Error{Code: run.CodeVaultTampered, Message: "run " + c.ID + ": " + err.Error()}
}
