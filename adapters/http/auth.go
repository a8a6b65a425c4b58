package http

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/runs"
)

// AuthConfig says who may call the API (SPEC §2.2). Exactly one way must be chosen: a
// single Token (--auth-token, an admin), a list of Principals (--auth-config), or
// Disabled (--no-auth).
type AuthConfig struct {
	Token      string
	Principals []Principal
	Disabled   bool
}

// Principal is one caller from --auth-config. Tenant "" is an untenanted principal.
type Principal struct {
	Name   string    `json:"name"`
	Token  string    `json:"token"`
	Role   runs.Role `json:"role"`
	Tenant string    `json:"tenant,omitempty"`
}

// TokenPrincipalName is the name the single --auth-token principal acts under in the
// audit trail.
const TokenPrincipalName = "token"

// AnonymousName is the actor of requests when auth is disabled.
const AnonymousName = "anonymous"

// Validate reports a configuration the server must refuse to start with. Messages name
// the flag or the principal to fix and never include a token.
func (a AuthConfig) Validate() error {
	if a.Disabled {
		if a.Token != "" || len(a.Principals) > 0 {
			return errors.New("--no-auth cannot be combined with --auth-token or --auth-config: choose one")
		}
		return nil
	}
	if a.Token != "" && len(a.Principals) > 0 {
		return errors.New("--auth-token and --auth-config are exclusive: choose one")
	}
	if a.Token == "" && len(a.Principals) == 0 {
		return errors.New("no auth configured: set --auth-token, --auth-config or --no-auth")
	}
	names := map[string]bool{}
	tokens := map[string]bool{}
	var errs []error
	for i, p := range a.Principals {
		where := fmt.Sprintf("--auth-config principal %d (%q)", i+1, p.Name)
		if strings.TrimSpace(p.Name) == "" {
			errs = append(errs, fmt.Errorf("--auth-config principal %d: name is required", i+1))
		} else if names[p.Name] {
			errs = append(errs, fmt.Errorf("%s: name is used twice", where))
		}
		names[p.Name] = true
		if p.Token == "" {
			errs = append(errs, fmt.Errorf("%s: token is required", where))
		} else if tokens[p.Token] {
			errs = append(errs, fmt.Errorf("%s: token is shared with another principal", where))
		}
		tokens[p.Token] = true
		if rank(p.Role) == 0 {
			errs = append(errs, fmt.Errorf("%s: role %q is not viewer, operator or admin", where, p.Role))
		}
	}
	return errors.Join(errs...)
}

// rank orders roles; 0 is no role at all, so an invalid role is allowed nothing.
func rank(r runs.Role) int {
	switch r {
	case runs.Viewer:
		return 1
	case runs.Operator:
		return 2
	case runs.Admin:
		return 3
	}
	return 0
}

type credential struct {
	digest    [sha256.Size]byte
	principal runs.Principal
}

// authenticator matches bearer tokens. Tokens are compared as SHA-256 digests with
// crypto/subtle, so neither a token's content nor its length shows in the timing, and
// every credential is compared on every request.
type authenticator struct {
	disabled bool
	creds    []credential
}

func newAuthenticator(a AuthConfig) *authenticator {
	au := &authenticator{disabled: a.Disabled}
	if a.Token != "" {
		au.creds = append(au.creds, credential{digest: sha256.Sum256([]byte(a.Token)),
			principal: runs.Principal{Name: TokenPrincipalName, Role: runs.Admin}})
	}
	for _, p := range a.Principals {
		if p.Token == "" {
			continue // an empty token must never match an empty header
		}
		au.creds = append(au.creds, credential{digest: sha256.Sum256([]byte(p.Token)),
			principal: runs.Principal{Name: p.Name, Role: p.Role, Tenant: p.Tenant}})
	}
	return au
}

// authenticate returns the principal of an Authorization header value.
func (a *authenticator) authenticate(header string) (runs.Principal, error) {
	if a.disabled {
		return runs.Principal{Name: AnonymousName, Role: runs.Admin}, nil
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if header == "" {
		return runs.Principal{}, errors.New("missing token: send the header Authorization: Bearer TOKEN")
	}
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return runs.Principal{}, errors.New("the Authorization header must be: Bearer TOKEN")
	}
	digest := sha256.Sum256([]byte(token))
	found := -1
	for i := range a.creds {
		if subtle.ConstantTimeCompare(digest[:], a.creds[i].digest[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return runs.Principal{}, errors.New("the bearer token is not valid")
	}
	return a.creds[found].principal, nil
}

type principalKey struct{}

// principal is the caller authenticated by authorize.
func principal(c *gin.Context) runs.Principal {
	p, _ := c.Get(principalKey{})
	pr, _ := p.(runs.Principal)
	return pr
}

// openRoutes need no token (SPEC §2.2): probes and scrapers carry none, and the API
// document is public so a client can be generated before anyone has a token (§14.7).
func openRoute(route string) bool {
	return route == "/livez" || route == "/readyz" || route == "/metrics" || route == "/v1/openapi.json"
}

// authorize authenticates every /v1 request (matched or not, so unknown paths don't tell
// strangers which routes exist) and checks the permission table for matched routes.
func (s *server) authorize(c *gin.Context) {
	route := c.FullPath()
	if openRoute(route) || (route == "" && !strings.HasPrefix(c.Request.URL.Path, "/v1/")) {
		c.Next()
		return
	}
	p, err := s.auth.authenticate(c.GetHeader("Authorization"))
	if err != nil {
		c.Header("WWW-Authenticate", `Bearer realm="sluice"`)
		// Refused before its body is read (SPEC §14.3): a tokenless client trickling a
		// body gets its 401 now, and the body is never waited for.
		s.refuseUnread(c, apiErrorf(http.StatusUnauthorized, codeUnauthorized, "%s", err.Error()))
		return
	}
	if route != "" {
		if err := s.perms.check(p, c.Request.Method, route, c.Param("tenant")); err != nil {
			s.refuseUnread(c, err)
			return
		}
	}
	c.Set(principalKey{}, p)
	c.Next()
}

// TokenChecker checks a bare token against the principals of an AuthConfig exactly as
// the API checks a bearer token, for transports that sign people in with one (the web
// console).
type TokenChecker struct{ a *authenticator }

// NewTokenChecker returns the checker of a.
func NewTokenChecker(a AuthConfig) TokenChecker { return TokenChecker{a: newAuthenticator(a)} }

// Authenticate returns the principal holding token; the error never quotes it.
func (t TokenChecker) Authenticate(token string) (runs.Principal, error) {
	if strings.TrimSpace(token) == "" && !t.a.disabled {
		return runs.Principal{}, errors.New("missing token")
	}
	return t.a.authenticate("Bearer " + token)
}
