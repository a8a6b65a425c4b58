// Package s3fake runs an in-process S3-compatible server for tests and benchmarks:
// gofakes3 over an httptest server, spoken to with the real AWS SDK. On top of gofakes3 it
// checks the access key id of every signed request (gofakes3 does not verify signatures,
// so a wrong key is answered 403 InvalidAccessKeyId as S3 would), and it can fail the next
// requests with a status (503 SlowDown, …) or cut responses short, to exercise retries.
package s3fake
