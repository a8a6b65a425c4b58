package reach

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DefaultSchema is where PostgreSQL puts unqualified names when search_path is unset.
const DefaultSchema = "public"

// Database identifies a SQL database a connector targets, or the history's own: the
// server (host, port, and what the host resolved to), the database name and the
// schemas the connector reads or writes (search_path, schema-qualified tables).
type Database struct {
	Host    string
	Port    uint16
	Addrs   []netip.Addr // Host resolved; a unix socket directory resolves to none
	Name    string
	Schemas []string // empty means DefaultSchema
}

func (d Database) String() string {
	host := d.Host
	if !strings.HasPrefix(host, "/") {
		host = net.JoinHostPort(host, strconv.Itoa(int(d.Port)))
	}
	return fmt.Sprintf("%s/%s (schema %s)", host, d.Name, strings.Join(d.schemas(), ", "))
}

func (d Database) schemas() []string {
	if len(d.Schemas) == 0 {
		return []string{DefaultSchema}
	}
	return d.Schemas
}

// local reports whether d is on this machine: a unix socket, localhost or a loopback
// address. Every local server on one port is the same server.
func (d Database) local() bool {
	if strings.HasPrefix(d.Host, "/") || normalizeName(d.Host) == "localhost" {
		return true
	}
	for _, a := range d.Addrs {
		if a.Unmap().IsLoopback() {
			return true
		}
	}
	if a, err := netip.ParseAddr(strings.Trim(d.Host, "[]")); err == nil {
		return a.Unmap().IsLoopback()
	}
	return false
}

// sameServer reports whether a and b reach one server: same port and the same host
// name, a shared address, or both local.
func sameServer(a, b Database) bool {
	if a.Port != b.Port {
		return false
	}
	if normalizeName(a.Host) == normalizeName(b.Host) || a.local() && b.local() {
		return true
	}
	for _, x := range a.Addrs {
		if slices.Contains(b.Addrs, x) {
			return true
		}
	}
	return false
}

// CheckHistory refuses target when it is history: the same server and database and a
// schema in common. A history that shares its database with other schemas (one schema
// per environment or per test) leaves those schemas reachable.
func CheckHistory(key string, history, target Database) error {
	if history.Name == "" || !sameServer(history, target) || history.Name != target.Name {
		return nil
	}
	for _, s := range target.schemas() {
		if slices.Contains(history.schemas(), s) {
			return &RefusedError{Kind: ErrHistoryRefused, Key: key, Target: target.String(),
				Reason: "it is the server's own history database, which no connector may read or write whatever --allow-host says; use another database or schema"}
		}
	}
	return nil
}

// PostgresDatabase is the Database of a PostgreSQL connection: its host, port and
// database, the schemas of its search_path (DefaultSchema when it names none) and extra
// schemas it touches (a schema-qualified table).
func PostgresDatabase(host string, port uint16, name, searchPath string, extra ...string) Database {
	db := Database{Host: host, Port: port, Name: name}
	for _, s := range strings.Split(searchPath, ",") {
		s = strings.Trim(strings.TrimSpace(s), `"`)
		if s != "" && s != "$user" {
			db.Schemas = append(db.Schemas, s)
		}
	}
	if len(db.Schemas) == 0 {
		db.Schemas = []string{DefaultSchema}
	}
	for _, s := range extra {
		if s != "" && !slices.Contains(db.Schemas, s) {
			db.Schemas = append(db.Schemas, s)
		}
	}
	return db
}

// optionsSearchPath finds search_path settings inside a libpq options parameter
// ("-c search_path=a,b", "-csearch_path=a", "--search_path=a").
var optionsSearchPath = regexp.MustCompile(`search_path\s*=\s*(\S+)`)

// SearchPath is every schema a PostgreSQL connection's runtime parameters put on its
// search_path: the search_path parameter and any set through options, comma-joined, so
// a connection cannot hide the history's schema in options.
func SearchPath(params map[string]string) string {
	parts := []string{params["search_path"]}
	for _, m := range optionsSearchPath.FindAllStringSubmatch(params["options"], -1) {
		parts = append(parts, strings.ReplaceAll(m[1], `\,`, ","))
	}
	return strings.Join(parts, ",")
}
