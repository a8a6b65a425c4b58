// Package testdb provisions real databases for tests: PostgreSQL from
// SLUICE_TEST_POSTGRES_URL and MariaDB/MySQL from SLUICE_TEST_MYSQL_URL; without them a
// container through testcontainers-go when a Docker engine answers; else the test is
// skipped — except under CI (the CI variable set), where it fails, so CI never silently
// skips a database. Every call gets its own PostgreSQL schema or MySQL database, dropped
// when the test ends, so parallel tests never see each other's rows, advisory locks or
// NOTIFY channels (the store derives those from the schema).
//
// This is the only package that imports testcontainers-go.
package testdb
