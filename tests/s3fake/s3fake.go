package s3fake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Credentials the server accepts.
const (
	KeyID  = "AKIASLUICETEST"
	Secret = "sluice-test-secret-key"
	Region = "us-east-1"
)

// Server is a running fake store.
type Server struct {
	URL     string
	Backend *s3mem.Backend
	srv     *httptest.Server
	client  *s3.Client

	mu       sync.Mutex
	failures []Fault
	requests int
}

// Fault makes one upcoming request that matches fail.
type Fault struct {
	// Method and PathContains select the request ("" matches any).
	Method       string
	PathContains string
	// Status answers with this status and Code as the S3 error code; 0 with Cut set
	// answers normally but cuts the body after Cut bytes.
	Status int
	Code   string
	Cut    int
}

var credential = regexp.MustCompile(`Credential=([^/]+)/`)

// Start starts a server on a loopback port.
func Start() (*Server, error) {
	s := &Server{Backend: s3mem.New()}
	fake := gofakes3.New(s.Backend, gofakes3.WithoutVersioning())
	inner := fake.Server()
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		f, ok := s.take(r)
		s.mu.Unlock()
		if m := credential.FindStringSubmatch(r.Header.Get("Authorization")); m == nil || m[1] != KeyID {
			writeError(w, http.StatusForbidden, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
			return
		}
		if ok && f.Status != 0 {
			writeError(w, f.Status, f.Code, "injected by the test")
			return
		}
		if ok && f.Cut > 0 {
			inner.ServeHTTP(&cutWriter{ResponseWriter: w, left: f.Cut}, r)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	s.URL = s.srv.URL
	s.client = s3.New(s3.Options{
		Region:                     Region,
		BaseEndpoint:               aws.String(s.URL),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(KeyID, Secret, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	return s, nil
}

func (s *Server) take(r *http.Request) (Fault, bool) {
	for i, f := range s.failures {
		if (f.Method == "" || f.Method == r.Method) && strings.Contains(r.URL.String(), f.PathContains) {
			s.failures = append(s.failures[:i], s.failures[i+1:]...)
			return f, true
		}
	}
	return Fault{}, false
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>fake</RequestId></Error>`, code, msg)
}

// cutWriter passes left bytes of the body, then hijacks and closes the connection, as a
// network failure mid-body would.
type cutWriter struct {
	http.ResponseWriter
	left int
	cut  bool
}

func (c *cutWriter) Write(b []byte) (int, error) {
	if c.cut {
		return 0, io.ErrClosedPipe
	}
	if len(b) <= c.left {
		c.left -= len(b)
		return c.ResponseWriter.Write(b)
	}
	n, _ := c.ResponseWriter.Write(b[:c.left])
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	c.cut = true
	if h, ok := c.ResponseWriter.(http.Hijacker); ok {
		if conn, _, err := h.Hijack(); err == nil {
			conn.Close()
		}
	}
	return n, io.ErrClosedPipe
}

// Fail queues faults; each fails the first later request it matches.
func (s *Server) Fail(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, f...)
}

// Pending is the number of queued faults not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.failures)
}

// Requests is the number of requests served so far.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Host is the server's host:port.
func (s *Server) Host() string { return strings.TrimPrefix(s.URL, "http://") }

// Port is the server's port.
func (s *Server) Port() string {
	_, p, _ := net.SplitHostPort(s.Host())
	return p
}

// CreateBucket creates a bucket.
func (s *Server) CreateBucket(name string) error { return s.Backend.CreateBucket(name) }

// Put stores an object.
func (s *Server) Put(ctx context.Context, bucket, key string, data []byte) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)})
	return err
}

// Get reads an object.
func (s *Server) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// Keys lists the keys under prefix, sorted.
func (s *Server) Keys(ctx context.Context, bucket, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// Uploads lists the keys of multipart uploads in progress (neither completed nor aborted).
func (s *Server) Uploads(ctx context.Context, bucket string) ([]string, error) {
	out, err := s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "NoSuchUpload" {
		return nil, nil // gofakes3 answers so for a bucket that never had an upload
	}
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
	}
	return keys, nil
}

// Config is an s3 connector config for path on this server.
func (s *Server) Config(path string) map[string]any {
	return map[string]any{
		"path": path, "endpoint": s.URL, "region": Region,
		"access_key_id": KeyID, "secret_access_key": Secret,
	}
}

// DeletePrefix deletes every object under prefix.
func (s *Server) DeletePrefix(ctx context.Context, bucket, prefix string) error {
	keys, err := s.Keys(ctx, bucket, prefix)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)}); err != nil {
			return err
		}
	}
	return nil
}
