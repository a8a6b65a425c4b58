package execute

import (
	"context"
	"fmt"
)

// negotiate switches the source to encoded pages when the sink accepts its encoding, so
// rows pass through without being decoded and encoded again (a COPY passthrough between
// two PostgreSQL databases). Declining is never an error: the run then moves decoded
// pages. Rows still to be dropped for an exactly-once resume need decoded pages.
func (r *runner) negotiate(ctx context.Context, src Source, snk Sink) error {
	if r.skip > 0 {
		return nil
	}
	ps, ok := src.(PassthroughSource)
	if !ok {
		return nil
	}
	pk, ok := snk.(PassthroughSink)
	if !ok {
		return nil
	}
	var (
		enc      Encoding
		offered  bool
		accepted bool
	)
	if err := safely(func() error { enc, offered = ps.Encoding(); return nil }); err != nil {
		return r.fail(RoleSource, 0, err)
	}
	if !offered {
		return nil
	}
	if err := safely(func() error { accepted = pk.AcceptEncoding(ctx, enc); return nil }); err != nil {
		return r.fail(RoleSink, 0, err)
	}
	if !accepted {
		return nil
	}
	if err := safely(func() error { return ps.UseEncoding(ctx) }); err != nil {
		return r.fail(RoleSource, 0, fmt.Errorf("switch to %s pages: %w", enc.Format, err))
	}
	// Accepting may change when the sink's pages become final (one COPY for the run).
	if err := safely(func() error { r.durable = snk.Durability(); return nil }); err != nil {
		return r.fail(RoleSink, 0, err)
	}
	r.log.Info("rows pass through without conversion", "format", enc.Format)
	return nil
}
