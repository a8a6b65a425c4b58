package storecontract

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

// idAt is a UUIDv7 stamped with the Unix millisecond ms.
func idAt(ms int64) string {
	u := uuid.Must(uuid.NewV7())
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	return u.String()
}

func windowCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a time window lists exactly the runs created in it, ids up to IDLead ahead included": func(t *testing.T, e *env) {
			since := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			until := since.Add(time.Hour)
			lead := runs.IDLead - time.Millisecond
			mk := func(name string, created time.Time, idLead time.Duration) string {
				r := rec(name, func(r *runs.Record) {
					r.CreatedAt = created
					r.ID = idAt(created.Add(idLead).UnixMilli())
				})
				e.create(t, r)
				return r.ID
			}
			firstIn := mk("first-in", since, lead)                                 // id inside the window
			lastIn := mk("last-in", until.Add(-time.Millisecond), lead)            // id past until
			middle := mk("middle", since.Add(30*time.Minute), 0)                   // plain
			mk("before", since.Add(-time.Millisecond), 0)                          // created too early
			mk("before-id-inside", since.Add(-time.Millisecond), time.Millisecond) // id at since, created before
			mk("at-until", until, 0)                                               // created at until: out
			mk("long-after", until.Add(2*runs.IDLead), 0)

			got, err := e.s.List(e.ctx, runs.Filter{Since: since, Until: until})
			require.NoError(t, err)
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			require.Equal(t, []string{lastIn, middle, firstIn}, ids, "newest first, exactly the window")

			// Paging inside the window walks on from the cursor.
			page, err := e.s.List(e.ctx, runs.Filter{Since: since, Until: until, After: lastIn, Limit: 1})
			require.NoError(t, err)
			require.Len(t, page, 1)
			require.Equal(t, middle, page[0].ID)
		},
	}
}
