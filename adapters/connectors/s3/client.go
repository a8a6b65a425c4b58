package s3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/reach"
)

// store is one configured bucket: the client and the retry policy of its requests.
type store struct {
	client *s3.Client
	bucket string
	retry  retry.Policy
}

// newStore builds a client whose every connection is dialed through r (SPEC §14.1).
// The SDK's own retries are off: requests are retried per page by the retry block, which
// marks what it gives up on as transient for run-level retries.
func newStore(ctx context.Context, r execute.Reach, o options) (*store, error) {
	dialKey := "path"
	if o.endpoint != "" {
		dialKey = "endpoint"
	}
	confined := execute.Confined(r)
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return r.Dial(ctx, dialKey, network, addr)
		}
		if confined {
			tr.Proxy = nil // a proxy would dial the store out of the policy's sight
		}
		tr.MaxIdleConnsPerHost = 16
	})
	loads := []func(*config.LoadOptions) error{
		config.WithRegion(o.region),
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
	}
	if o.keyID != "" {
		loads = append(loads, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(o.keyID, o.secret, o.token)))
	}
	if confined {
		// The metadata service is a link-local address the dial policy always refuses;
		// asking it would only turn a missing credential into a confusing refusal.
		loads = append(loads, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("s3: load the AWS configuration: %w", err)
	}
	client := s3.NewFromConfig(awsCfg, func(opts *s3.Options) {
		if o.endpoint != "" {
			opts.BaseEndpoint = aws.String(o.endpoint)
			opts.UsePathStyle = true
		}
		// Checksums only where a request needs them: S3-compatible stores differ in how
		// they handle the SDK's default trailing checksums.
		opts.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		opts.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &store{client: client, bucket: o.bucket, retry: o.retry}, nil
}

// do runs one request under the retry policy; what is the request's description in
// errors (an operation and the object), e.g. "GET s3://b/k".
func (s *store) do(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	err := retry.Do(ctx, s.retry, func(ctx context.Context) error {
		return classify(fn(ctx))
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("s3: %s: %w", what, ctx.Err())
	}
	return &opError{what: what, err: err}
}

// opError names the connector, the operation and object, and the cause; it keeps the
// cause's chain (a transient mark, a refusal) for errors.Is/As.
type opError struct {
	what string
	err  error
}

func (e *opError) Error() string { return "s3: " + e.what + ": " + cause(e.err) }
func (e *opError) Unwrap() error { return e.err }

// cause is the short reason of an SDK error: the store's code and message (never the
// request's signature or credentials, which the SDK does not put in errors anyway).
func cause(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		msg := api.ErrorCode()
		if m := api.ErrorMessage(); m != "" {
			msg += ": " + m
		}
		var re *awshttp.ResponseError
		if errors.As(err, &re) {
			msg += fmt.Sprintf(" (HTTP %d)", re.HTTPStatusCode())
		}
		return msg + hint(api.ErrorCode())
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("HTTP %d", re.HTTPStatusCode()) + hint(statusCode(re.HTTPStatusCode()))
	}
	var oe *smithy.OperationError
	if errors.As(err, &oe) {
		return oe.Err.Error()
	}
	return err.Error()
}

func statusCode(status int) string {
	switch status {
	case http.StatusNotFound:
		return "NotFound"
	case http.StatusForbidden:
		return "Forbidden"
	}
	return ""
}

func hint(code string) string {
	switch code {
	case "NoSuchBucket":
		return "; check the bucket in path (and region / endpoint)"
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "Forbidden":
		return "; check access_key_id / secret_access_key (or the credential chain) and the bucket's permissions"
	case "NotFound":
		return "; the bucket or object does not exist (check the bucket in path, region and endpoint)"
	}
	return ""
}

// classify marks the errors worth another try as transient: network failures, timeouts,
// 5xx answers and throttling. A confinement refusal never is.
func classify(err error) error {
	if err == nil || reach.CodeOf(err) != "" {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "RequestTimeTooSkewed",
			"InternalError", "ServiceUnavailable", "TooManyRequests":
			return execute.Transient(err)
		}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		if retry.TransientStatus(re.HTTPStatusCode()) {
			return execute.Transient(err)
		}
		return err
	}
	if retry.NetworkFailure(err) {
		return execute.Transient(err)
	}
	return err
}

// url is how an object appears in messages.
func (s *store) url(key string) string { return "s3://" + s.bucket + "/" + key }
