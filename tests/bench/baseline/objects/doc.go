// Command objects is the baseline of the objects benchmark suite: the same four pipelines
// as the sluice cases, written directly against the raw libraries (encoding/csv,
// encoding/json, parquet-go, pgx, the AWS SDK's upload and download managers) with no
// sluice code, the way a developer would write them by hand.
//
//	objects csv2parquet IN.csv OUT.parquet
//	objects parquet2jsonl IN.parquet OUT.jsonl
//	objects pg2s3 PGURL QUERY ENDPOINT KEYID SECRET BUCKET KEY
//	objects s32pg ENDPOINT KEYID SECRET BUCKET KEY PGURL TABLE
package main
