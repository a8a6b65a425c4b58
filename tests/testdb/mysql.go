package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	tcmysql "github.com/testcontainers/testcontainers-go/modules/mysql"
)

// MySQL returns the URL of a fresh, empty MariaDB/MySQL database for this test, created
// as t_<random> on the server of SLUICE_TEST_MYSQL_URL (or a container) and dropped when
// the test ends. The URL has the form mysql://user:password@host:port/t_<random>?params,
// whatever form the variable used (URL or go-sql-driver DSN).
func MySQL(t testing.TB) string {
	t.Helper()
	base := resolve(t, MySQLEnv, mysqlContainer)
	cfg, err := ParseMySQL(base)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	name := uniqueName(t)
	exec := func(ctx context.Context, stmt string) error {
		server := cfg.Clone()
		server.DBName = ""
		db, err := sql.Open("mysql", server.FormatDSN())
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.ExecContext(ctx, stmt)
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exec(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatalf("testdb: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			t.Errorf("testdb: drop database %s: %v", name, err)
		}
	})
	cfg.DBName = name
	return MySQLURL(cfg)
}

// ParseMySQL reads a mysql://user:password@host:port/db?params URL or a go-sql-driver DSN;
// params are the driver's DSN parameters in both forms.
func ParseMySQL(s string) (*mysql.Config, error) {
	dsn := s
	if strings.HasPrefix(s, "mysql://") {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%s is not a valid mysql:// URL", MySQLEnv)
		}
		host := u.Host
		if u.Port() == "" {
			host += ":3306"
		}
		user := ""
		if u.User != nil {
			user = u.User.Username()
			if pw, ok := u.User.Password(); ok {
				user += ":" + pw
			}
			user += "@"
		}
		dsn = user + "tcp(" + host + ")" + u.Path
		if u.RawQuery != "" {
			dsn += "?" + u.RawQuery
		}
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s is neither a mysql:// URL nor a DSN: %w", MySQLEnv, err)
	}
	return cfg, nil
}

// MySQLURL formats cfg as a mysql:// URL with the driver parameters of its DSN.
func MySQLURL(cfg *mysql.Config) string {
	u := url.URL{Scheme: "mysql", Host: cfg.Addr, Path: "/" + cfg.DBName}
	if cfg.Passwd != "" {
		u.User = url.UserPassword(cfg.User, cfg.Passwd)
	} else if cfg.User != "" {
		u.User = url.User(cfg.User)
	}
	if _, query, ok := strings.Cut(cfg.FormatDSN(), "?"); ok {
		u.RawQuery = query
	}
	return u.String()
}

// mysqlContainer starts one MySQL container per test binary (see postgresContainer).
var mysqlContainer = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := tcmysql.Run(ctx, "mysql:8.0.36",
		tcmysql.WithDatabase("test"), tcmysql.WithUsername("root"), tcmysql.WithPassword("test"))
	if err != nil {
		return "", err
	}
	dsn, err := c.ConnectionString(ctx)
	if err != nil {
		return "", err
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", err
	}
	return MySQLURL(cfg), nil
})
