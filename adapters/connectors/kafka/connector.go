package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/reach"
)

// Type is the connector's type name.
const Type = "kafka"

// Values of the source's keys.
const (
	StartEarliest = "earliest"
	StartLatest   = "latest"
	UntilEnd      = "end"
	FormatJSON    = "json"
	FormatRaw     = "raw"
)

// Connector is the kafka source and sink.
type Connector struct{}

// New returns the kafka connector.
func New() *Connector { return &Connector{} }

var (
	_ execute.SourceConnector = (*Connector)(nil)
	_ execute.SinkConnector   = (*Connector)(nil)
	_ execute.ShardPlanner    = (*Connector)(nil)
	_ execute.Targeter        = (*Connector)(nil)
)

// Spec declares the config keys of both roles.
func (*Connector) Spec() pipeline.Spec {
	return pipeline.Spec{
		Type:  Type,
		Roles: pipeline.RoleBoth,
		Description: "A Kafka topic: as the source, read from per-partition offsets up to the end seen at the run's start " +
			"(the bookmark is the offsets; use replication: {type: incremental, cursor: offset} to resume); as the sink, " +
			"JSON messages from an idempotent producer, exactly-once through Kafka transactions.",
		ExactlyOnce: true,
		Shardable:   true,
		Fields: append([]pipeline.FieldSpec{
			{Name: "brokers", Type: pipeline.FieldStrings, Required: true,
				Description: "Bootstrap brokers as host:port; every connection is dialed through the server's host policy."},
			{Name: "topic", Type: pipeline.FieldString, Required: true, Description: "The topic read or written."},
			{Name: "start", Type: pipeline.FieldString, Role: pipeline.RoleSource, Default: StartEarliest,
				Enum:        []string{StartEarliest, StartLatest},
				Description: "Where a read without a bookmark starts in each partition (a first run, or a full read)."},
			{Name: "until", Type: pipeline.FieldString, Role: pipeline.RoleSource, Default: UntilEnd, Enum: []string{UntilEnd},
				Description: "end: stop at the offsets that were each partition's end (last stable offset) when the run started, so the run is finite."},
			{Name: "format", Type: pipeline.FieldString, Role: pipeline.RoleSource, Default: FormatJSON,
				Enum:        []string{FormatJSON, FormatRaw},
				Description: "json: each message value is a JSON object whose keys are the columns; raw: rows of key, value, partition, offset, timestamp, headers."},
			cfg.BatchSizeField(),
			{Name: "key", Type: pipeline.FieldStrings, Role: pipeline.RoleSink,
				Description: "Columns whose values (JSON array, or the one value as text) form the message key; none: no key (round-robin partitions)."},
			{Name: "watermark_topic", Type: pipeline.FieldString, Role: pipeline.RoleSink, Default: DefaultWatermarkTopic,
				Description: "Compacted one-partition topic (created when missing) holding the exactly-once positions, written in the same transaction as the messages."},
			{Name: "timeout_secs", Type: pipeline.FieldInt, Default: int64(30), Min: ptr(1),
				Description: "How long opening waits for the brokers to answer before the run fails."},
			retry.Field(),
		}, securityFields()...),
		Check: check,
	}
}

func ptr(v int64) *int64 { return &v }

func check(role pipeline.Role, c map[string]any, path string) pipeline.Errors {
	var errs pipeline.Errors
	if brokers, err := cfg.Strings(c, "brokers"); err == nil {
		for i, b := range brokers {
			if strings.Contains(b, "${") {
				continue // resolved where the run executes, and checked when it opens
			}
			if _, _, err := splitBroker(b); err != nil {
				errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, "brokers") + "[" + strconv.Itoa(i) + "]", Message: err.Error()})
			}
		}
	}
	errs = append(errs, checkSecurity(c, path)...)
	return append(errs, retry.Check(c, path)...)
}

func splitBroker(b string) (string, uint16, error) {
	host, port, err := net.SplitHostPort(b)
	if err != nil {
		return "", 0, fmt.Errorf("%q must be host:port", b)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 || host == "" {
		return "", 0, fmt.Errorf("%q must be host:port with a port from 1 to 65535", b)
	}
	return host, uint16(n), nil
}

// Targets lists the brokers, for the submit-time host check (SPEC §14.1).
func (*Connector) Targets(_ pipeline.Role, c map[string]any) []execute.Target {
	brokers, err := cfg.Strings(c, "brokers")
	if err != nil {
		return nil
	}
	var out []execute.Target
	for _, b := range brokers {
		if host, port, err := splitBroker(b); err == nil {
			out = append(out, execute.Target{Key: "brokers", Host: host, Port: port})
		}
	}
	return out
}

// common are the keys both roles read.
type common struct {
	brokers []string
	topic   string
	timeout time.Duration
	retry   retry.Policy
	sec     security
}

func commonOf(c map[string]any) (common, error) {
	var o common
	var err error
	if o.brokers, err = cfg.Strings(c, "brokers"); err != nil {
		return o, err
	}
	if len(o.brokers) == 0 {
		return o, errors.New("config key \"brokers\" must list at least one host:port")
	}
	for _, b := range o.brokers {
		if _, _, err := splitBroker(b); err != nil {
			return o, fmt.Errorf("config key \"brokers\": %w", err)
		}
	}
	if o.topic, err = cfg.String(c, "topic", ""); err != nil {
		return o, err
	}
	if o.topic == "" {
		return o, errors.New("config key \"topic\" must name a topic")
	}
	secs, err := cfg.Int(c, "timeout_secs", 30)
	if err != nil {
		return o, err
	}
	if secs < 1 {
		return o, fmt.Errorf("config key \"timeout_secs\" must be at least 1, got %d", secs)
	}
	o.timeout = time.Duration(secs) * time.Second
	if o.retry, err = retry.Parse(c, retry.Default()); err != nil {
		return o, err
	}
	if o.sec, err = securityOf(c); err != nil {
		return o, err
	}
	return o, nil
}

// dialer dials brokers through the Reach and remembers the first refusal, so an open that
// fails because the policy refused a broker reports the refusal (and its code) instead of
// the client's generic "unable to dial" after its own retries.
type dialer struct {
	reach   execute.Reach
	sec     security
	cancel  context.CancelFunc // ends the open at the first refusal: retrying cannot help
	mu      sync.Mutex
	refusal error
}

func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := d.reach.Dial(ctx, "brokers", network, addr)
	if err == nil {
		conn, err = d.sec.handshake(ctx, conn, addr)
	}
	var refused *tlsRefusal
	if err != nil && (reach.CodeOf(err) != "" || errors.As(err, &refused)) {
		d.mu.Lock()
		if d.refusal == nil {
			d.refusal = err
		}
		d.mu.Unlock()
		if d.cancel != nil {
			d.cancel()
		}
	}
	return conn, err
}

// explain prefers the recorded refusal over err.
func (d *dialer) explain(err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refusal != nil {
		return d.refusal
	}
	return d.sec.explain(err)
}

// newClient builds a client for o with extra options; dials go through r.
func newClient(o common, r execute.Reach, cancel context.CancelFunc, extra ...kgo.Opt) (*kgo.Client, *dialer, error) {
	d := &dialer{reach: execute.ReachOf(r), sec: o.sec, cancel: cancel}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(o.brokers...),
		kgo.Dialer(d.dial),
		kgo.DialTimeout(min(o.timeout, 10*time.Second)),
		kgo.RetryTimeout(o.timeout),
		kgo.ClientID("sluice"),
	}, append(o.sec.opts(), extra...)...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, d, fmt.Errorf("kafka client: %w", err)
	}
	return cl, d, nil
}

// classify marks errors worth retrying as transient: retriable Kafka error codes, network
// errors and timeouts. Fencing and authorization errors are never transient.
func classify(err error) error {
	if err == nil || execute.IsTransient(err) {
		return err
	}
	if reach.CodeOf(err) != "" || errors.Is(err, context.Canceled) {
		return err
	}
	var ne net.Error
	if kerr.IsRetriable(err) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		return execute.Transient(err)
	}
	return err
}
