package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// signoutPurgeBatch bounds the expired sign-outs one RevokeSession forgets: sign-outs are
// rare, so a few batches keep the table to the sign-outs of live cookies.
const signoutPurgeBatch = 1_000

const purgeSignoutsSQL = `DELETE FROM sluice_console_signouts WHERE session_id IN (
  SELECT session_id FROM sluice_console_signouts WHERE expires_at < ? LIMIT ?)`

// RevokeSession records that the console session id was signed out, until expires (the
// cookie's own expiry: after it the cookie is refused anyway). In the same transaction it
// forgets up to 1,000 sign-outs whose cookies expired before now. Recording an id twice
// is no error. Every store on the history sees the record once this returns.
func (s *Store) RevokeSession(ctx context.Context, id string, expires, now time.Time) error {
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw(`INSERT INTO sluice_console_signouts (session_id, expires_at) VALUES (?, ?)
ON CONFLICT (session_id) DO NOTHING`, id, expires.UnixMilli()).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewRaw(purgeSignoutsSQL, now.UnixMilli(), signoutPurgeBatch).Exec(ctx)
		return err
	})
	return translate("record console sign-out", err)
}

// SessionRevoked reports whether the console session id was signed out (and its record
// not yet purged, which happens only after the cookie expired).
func (s *Store) SessionRevoked(ctx context.Context, id string) (bool, error) {
	var n int
	if err := s.db.NewRaw("SELECT count(*) FROM sluice_console_signouts WHERE session_id = ?", id).Scan(ctx, &n); err != nil {
		return false, translate("read console sign-out", err)
	}
	return n > 0, nil
}
