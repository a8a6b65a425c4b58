package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/domain/state"
)

// Load returns the bookmark under key, or nil when there is none. A bookmark stored in
// the bare format carries no cursor name.
func (s *Store) Load(ctx context.Context, key string) (*state.Bookmark, error) {
	var raw string
	err := s.db.NewRaw("SELECT value FROM sluice_state WHERE key = ?", key).Scan(ctx, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, translate("load state "+key, err)
	}
	b, err := state.Decode([]byte(raw), "")
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", key, err)
	}
	return &b, nil
}

// Save replaces the bookmark under key in the versioned envelope (format 2), in one
// statement, so a crash leaves the old or the new bookmark.
func (s *Store) Save(ctx context.Context, key string, b state.Bookmark) error {
	return s.SaveFormat(ctx, key, b, state.FormatEnvelope)
}

// SaveFormat is Save in a chosen format: format 1 while a live member can read only bare
// bookmarks (SPEC §4.10).
func (s *Store) SaveFormat(ctx context.Context, key string, b state.Bookmark, format int) error {
	data, err := state.Encode(b, format)
	if err != nil {
		return fmt.Errorf("state %s: %w", key, err)
	}
	_, err = s.db.NewRaw(`INSERT INTO sluice_state (key, value, format, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, format = EXCLUDED.format, updated_at = EXCLUDED.updated_at`,
		key, string(data), format, time.Now().UnixMilli()).Exec(ctx)
	return translate("save state "+key, err)
}
