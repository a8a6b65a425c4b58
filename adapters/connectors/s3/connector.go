package s3

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Type is the connector's type name.
const Type = "s3"

// DefaultRegion is the region of a config that sets none.
const DefaultRegion = "us-east-1"

// Connector is the s3 source and sink.
type Connector struct {
	partSize int64
}

// Option configures the connector.
type Option func(*Connector)

// WithPartSize sets the multipart upload part size (default 8 MiB; S3 requires at least
// 5 MiB for every part but the last).
func WithPartSize(n int64) Option { return func(c *Connector) { c.partSize = n } }

// New returns the s3 connector.
func New(opts ...Option) *Connector {
	c := &Connector{partSize: 8 << 20}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Spec declares the config keys of both roles.
func (*Connector) Spec() pipeline.Spec {
	fields := []pipeline.FieldSpec{
		{Name: "path", Type: pipeline.FieldString, Required: true,
			Description: "Source: s3://bucket/prefix/glob, e.g. s3://lake/orders/2026-*/*.parquet (keys in key order). Sink: s3://bucket/prefix; objects are written as <prefix>/<run>/part-<shard>-<part>.<ext>."},
		{Name: "region", Type: pipeline.FieldString, Default: DefaultRegion,
			Description: "The bucket's region."},
		{Name: "endpoint", Type: pipeline.FieldString,
			Description: "URL of an S3-compatible store (MinIO, Ceph, R2, …), e.g. http://minio:9000; path-style addressing is used when set. Empty: AWS."},
		{Name: "access_key_id", Type: pipeline.FieldString,
			Description: "Access key id; with secret_access_key. Empty: the standard AWS credential chain."},
		{Name: "secret_access_key", Type: pipeline.FieldString, Secret: true,
			Description: "Secret access key; use ${secret:NAME}."},
		{Name: "session_token", Type: pipeline.FieldString, Secret: true,
			Description: "Session token of temporary credentials; use ${secret:NAME}."},
	}
	fields = append(fields, format.Fields("csv, jsonl or parquet. Source: by default taken from the glob's extension. Sink: parquet unless set.")...)
	fields = append(fields,
		pipeline.FieldSpec{Name: "max_rows_per_object", Type: pipeline.FieldInt, Role: pipeline.RoleSink, Default: int64(0),
			Description: "Sink: start a new object (part) after this many rows; 0 writes one object per run or shard."},
		pipeline.FieldSpec{Name: retry.Key, Type: pipeline.FieldObject,
			Description: "Retries of transient errors (network, 5xx, throttling) per request: {attempts: 5, initial_secs: 1, max_secs: 30}, exponential backoff with jitter."},
		cfg.BatchSizeField(),
	)
	return pipeline.Spec{
		Type:        Type,
		Roles:       pipeline.RoleBoth,
		Shardable:   true,
		Description: "Objects in Amazon S3 or any S3-compatible store, as CSV, JSONL or Parquet. Source: a glob over keys, read in key order, sharded by key hash. Sink: multipart uploads completed only when the run commits, named per run, shard and part.",
		Fields:      fields,
		Check:       check,
	}
}

func check(role pipeline.Role, c map[string]any, path string) pipeline.Errors {
	var errs pipeline.Errors
	add := func(key string, err error) {
		errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, key), Message: err.Error()})
	}
	if _, err := parse(role, c); err != nil {
		add(err.key, err.err)
	}
	return errs
}

// keyError is a config error and the key it is about.
type keyError struct {
	key string
	err error
}

func (e *keyError) Error() string {
	if strings.Contains(e.err.Error(), "config key") {
		return e.err.Error()
	}
	return fmt.Sprintf("config key %q: %v", e.key, e.err)
}
func (e *keyError) Unwrap() error { return e.err }

// options is a parsed config.
type options struct {
	bucket   string
	prefix   string // the key prefix (sink) or the glob (source)
	region   string
	endpoint string
	keyID    string
	secret   string
	token    string
	format   format.Options
	maxRows  int64
	retry    retry.Policy
	batch    int
}

func parse(role pipeline.Role, c map[string]any) (options, *keyError) {
	var o options
	fail := func(key string, err error) (options, *keyError) { return options{}, &keyError{key, err} }
	p, err := cfg.String(c, "path", "")
	if err != nil {
		return fail("path", err)
	}
	if strings.Contains(p, "${") {
		// Resolved where the run executes; checked again at open.
		return o, nil
	}
	if o.bucket, o.prefix, err = splitPath(p); err != nil {
		return fail("path", err)
	}
	if role == pipeline.RoleSink && hasGlob(o.prefix) {
		return fail("path", fmt.Errorf("an s3 sink path is a key prefix and cannot hold a glob pattern"))
	}
	if o.region, err = cfg.String(c, "region", DefaultRegion); err != nil {
		return fail("region", err)
	}
	if o.region == "" {
		o.region = DefaultRegion
	}
	if o.endpoint, err = cfg.String(c, "endpoint", ""); err != nil {
		return fail("endpoint", err)
	}
	if o.endpoint != "" && !strings.Contains(o.endpoint, "${") {
		if _, _, err := endpointHost(o.endpoint); err != nil {
			return fail("endpoint", err)
		}
	}
	if o.keyID, err = cfg.String(c, "access_key_id", ""); err != nil {
		return fail("access_key_id", err)
	}
	if o.secret, err = cfg.String(c, "secret_access_key", ""); err != nil {
		return fail("secret_access_key", err)
	}
	if o.token, err = cfg.String(c, "session_token", ""); err != nil {
		return fail("session_token", err)
	}
	if (o.keyID == "") != (o.secret == "") {
		return fail("secret_access_key", fmt.Errorf("access_key_id and secret_access_key are set together, or neither (then the standard AWS credential chain is used)"))
	}
	name := o.prefix
	if role == pipeline.RoleSink {
		if f, _ := cfg.String(c, "format", ""); f == "" {
			name = "x" + format.Extension(format.Parquet)
		}
	}
	if o.format, err = format.Parse(c, name); err != nil {
		key := "format"
		for k, e := range format.Check(c, name) {
			if e != nil {
				key = k
			}
		}
		return fail(key, err)
	}
	if o.maxRows, err = cfg.Int(c, "max_rows_per_object", 0); err != nil {
		return fail("max_rows_per_object", err)
	}
	if o.maxRows < 0 {
		return fail("max_rows_per_object", fmt.Errorf("must be 0 (no limit) or more, got %d", o.maxRows))
	}
	if o.retry, err = retry.Parse(c, retry.Default()); err != nil {
		return fail(retry.Key, err)
	}
	if role == pipeline.RoleSink {
		mode, err := cfg.WriteModeOf(c)
		if err != nil {
			return fail("write_mode", err)
		}
		if mode != pipeline.Append && mode != "" {
			return fail("write_mode", fmt.Errorf("an s3 sink writes new objects per run (write_mode append); %s needs rows addressable by key", mode))
		}
	}
	return o, nil
}

// splitPath splits s3://bucket/rest into the bucket and the rest.
func splitPath(p string) (bucket, rest string, err error) {
	const scheme = "s3://"
	if !strings.HasPrefix(strings.ToLower(p), scheme) {
		return "", "", fmt.Errorf("must start with s3://, like s3://bucket/prefix/*.parquet")
	}
	bucket, rest, _ = strings.Cut(p[len(scheme):], "/")
	if bucket == "" {
		return "", "", fmt.Errorf("names no bucket; use s3://bucket/prefix")
	}
	if hasGlob(bucket) {
		return "", "", fmt.Errorf("the bucket name cannot be a glob pattern")
	}
	return bucket, rest, nil
}

func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// endpointHost parses an endpoint URL into its host and port.
func endpointHost(endpoint string) (string, uint16, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", 0, fmt.Errorf("must be an http(s) URL such as http://minio:9000")
	}
	port := uint64(443)
	if u.Scheme == "http" {
		port = 80
	}
	if u.Port() != "" {
		if port, err = strconv.ParseUint(u.Port(), 10, 16); err != nil {
			return "", 0, fmt.Errorf("has an invalid port")
		}
	}
	return u.Hostname(), uint16(port), nil
}

// Targets lists the host the config dials, for the submit-time confinement check (SPEC
// §14.1): the endpoint's, or AWS's regional S3 host.
func (*Connector) Targets(role pipeline.Role, c map[string]any) []execute.Target {
	o, err := parse(role, c)
	if err != nil {
		return nil
	}
	if o.endpoint != "" {
		host, port, err := endpointHost(o.endpoint)
		if err != nil {
			return nil
		}
		return []execute.Target{{Key: "endpoint", Host: host, Port: port}}
	}
	if o.bucket == "" {
		return nil
	}
	return []execute.Target{{Key: "path", Host: o.bucket + ".s3." + o.region + ".amazonaws.com", Port: 443}}
}

var _ execute.Targeter = (*Connector)(nil)
