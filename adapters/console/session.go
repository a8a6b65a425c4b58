package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/application/runs"
)

// CookieName is the session cookie. Its value is a signed claim (who, role, tenant,
// expiry, session id); the token the person signed in with is never part of it.
const CookieName = "sluice_session"

// DefaultSessionTTL is how long a session lasts (SPEC §14.8).
const DefaultSessionTTL = 12 * time.Hour

// maxRevoked bounds the signed-out sessions remembered until their expiry.
const maxRevoked = 10000

// session is the signed claim of a cookie.
type session struct {
	Name    string    `json:"n"`
	Role    runs.Role `json:"r"`
	Tenant  string    `json:"t,omitempty"`
	Expires int64     `json:"e"` // unix seconds
	ID      string    `json:"s"` // random; CSRF tokens and sign-out are bound to it
}

func (s session) principal() runs.Principal {
	return runs.Principal{Name: s.Name, Role: s.Role, Tenant: s.Tenant}
}

// sessions signs and checks cookies with one HMAC key and remembers signed-out ids.
type sessions struct {
	key []byte
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	revoked map[string]time.Time // session id → its expiry
}

func newSessions(key []byte, ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{key: key, ttl: ttl, now: now, revoked: map[string]time.Time{}}
}

func (s *sessions) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// issue starts a session for p and returns the cookie that carries it.
func (s *sessions) issue(p runs.Principal, secure bool) (*http.Cookie, session, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, session{}, err
	}
	exp := s.now().Add(s.ttl)
	sess := session{Name: p.Name, Role: p.Role, Tenant: p.Tenant, Expires: exp.Unix(), ID: hex.EncodeToString(id[:])}
	raw, err := json.Marshal(sess)
	if err != nil {
		return nil, session{}, err
	}
	payload := base64.RawURLEncoding.EncodeToString(raw)
	value := payload + "." + base64.RawURLEncoding.EncodeToString(s.mac("session", payload))
	return &http.Cookie{Name: CookieName, Value: value, Path: "/ui/", Expires: exp, MaxAge: int(s.ttl.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure}, sess, nil
}

// errNoSession covers every reason a cookie does not stand for a session; the person
// is sent to sign in, whatever the reason.
var errNoSession = errors.New("no valid session")

// check returns the session a cookie value stands for.
func (s *sessions) check(value string) (session, error) {
	payload, sig, ok := strings.Cut(value, ".")
	if !ok {
		return session{}, errNoSession
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac("session", payload)) {
		return session{}, errNoSession
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return session{}, errNoSession
	}
	var sess session
	if err := json.Unmarshal(raw, &sess); err != nil || sess.ID == "" || sess.Name == "" {
		return session{}, errNoSession
	}
	if !s.now().Before(time.Unix(sess.Expires, 0)) {
		return session{}, errNoSession
	}
	s.mu.Lock()
	_, gone := s.revoked[sess.ID]
	s.mu.Unlock()
	if gone {
		return session{}, errNoSession
	}
	return sess, nil
}

// revoke ends a session before its expiry: a copy of the cookie kept elsewhere is refused
// from now on (by this process; the cookie itself is cleared in the browser).
func (s *sessions) revoke(sess session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.revoked) >= maxRevoked {
		for id, exp := range s.revoked {
			if !now.Before(exp) {
				delete(s.revoked, id)
			}
		}
	}
	for id := range s.revoked {
		if len(s.revoked) < maxRevoked {
			break
		}
		delete(s.revoked, id) // still full of live ids: forget an arbitrary one
	}
	s.revoked[sess.ID] = time.Unix(sess.Expires, 0)
}

// csrf is the token every form of a session carries; it is bound to the session id, so
// a token from another session (or none) is refused.
func (s *sessions) csrf(sess session) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf", sess.ID))
}

func (s *sessions) checkCSRF(sess session, token string) bool {
	got, err := base64.RawURLEncoding.DecodeString(token)
	return err == nil && token != "" && hmac.Equal(got, s.mac("csrf", sess.ID))
}

// clearCookie removes the session cookie from the browser.
func clearCookie(secure bool) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: "", Path: "/ui/", MaxAge: -1, Expires: time.Unix(1, 0),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure}
}
