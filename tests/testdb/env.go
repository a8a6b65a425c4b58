package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
)

// Environment variables read here.
const (
	PostgresEnv = "SLUICE_TEST_POSTGRES_URL"
	MySQLEnv    = "SLUICE_TEST_MYSQL_URL"
	CIEnv       = "CI"
)

// inCI reports whether CI is set (to anything but "", "0" or "false").
func inCI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv(CIEnv)))
	return v != "" && v != "0" && v != "false"
}

// dockerHealthy asks the default container provider whether its engine answers, the
// check testcontainers.SkipIfProviderIsNotHealthy makes — as a value, so that CI can
// fail instead of skipping.
func dockerHealthy() (ok bool, why string) {
	defer func() {
		if r := recover(); r != nil {
			ok, why = false, fmt.Sprint(r)
		}
	}()
	p, err := testcontainers.ProviderDefault.GetProvider()
	if err != nil {
		return false, err.Error()
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Health(ctx); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// resolve returns the server URL for envVar, from the environment or a container, or
// ends the test as Choose decides.
func resolve(t testing.TB, envVar string, container func() (string, error)) string {
	t.Helper()
	url := os.Getenv(envVar)
	c := Choose(envVar, url, inCI(), dockerHealthy)
	switch c.Source {
	case FromEnv:
		return url
	case FromContainer:
		u, err := container()
		if err != nil {
			t.Fatalf("testdb: start a container for %s: %v", envVar, err)
		}
		return u
	case Fail:
		t.Fatalf("testdb: %s", c.Reason)
	default:
		t.Skipf("testdb: %s", c.Reason)
	}
	return ""
}

// uniqueName is a fresh schema or database name: t_ and 12 hex digits.
func uniqueName(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("testdb: random name: %v", err)
	}
	return "t_" + hex.EncodeToString(b[:])
}
