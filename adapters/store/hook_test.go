package store_test

import (
	"context"

	"github.com/uptrace/bun"
)

// hookFunc is a bun.QueryHook calling f with each statement after it ran.
type hookFunc func(query string)

func (hookFunc) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (f hookFunc) AfterQuery(_ context.Context, ev *bun.QueryEvent) { f(ev.Query) }
